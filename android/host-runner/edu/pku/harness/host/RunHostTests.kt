// Runs the JUnit 4 tests of android/src/test on the host JVM (Gradle cannot run here) and ends
// with the line `N passed, N failed`. Used by scripts/test-kotlin-host.sh; not part of the app.
package edu.pku.harness.host

import org.junit.runner.Description
import org.junit.runner.JUnitCore
import org.junit.runner.notification.Failure
import org.junit.runner.notification.RunListener
import java.util.jar.JarFile
import kotlin.system.exitProcess

fun main(args: Array<String>) {
    require(args.size == 1) { "usage: RunHostTests TESTS.jar" }
    // Every top-level class named *Test in the tests' jar.
    val classes = JarFile(args[0]).use { jar ->
        jar.entries().asSequence().map { it.name }
            .filter { it.endsWith("Test.class") && '$' !in it }
            .map { it.removeSuffix(".class").replace('/', '.') }
            .sorted().toList()
    }
    // A deadlock must fail the run, not hang it (pku.tests.timeout: seconds, 300 unless set).
    val timeout = System.getProperty("pku.tests.timeout")?.toLong() ?: 300
    val watchdog = Thread {
        try { Thread.sleep(timeout * 1_000) } catch (e: InterruptedException) { return@Thread }
        System.err.println("host tests: still running after $timeout s; thread dump follows")
        Thread.getAllStackTraces().forEach { (t, stack) ->
            System.err.println("\"${t.name}\"\n" + stack.joinToString("\n") { "    at $it" })
        }
        println("0 passed, 1 failed")
        Runtime.getRuntime().halt(1)
    }.apply { isDaemon = true; start() }

    var passed = 0
    var failed = 0
    val core = JUnitCore()
    core.addListener(object : RunListener() {
        private val failedNow = HashSet<Description>()
        override fun testFailure(failure: Failure) {
            failedNow.add(failure.description)
            println("FAIL ${failure.description.className.substringAfterLast('.')}.${failure.description.methodName}: ${failure.message}")
            failure.exception.stackTrace.take(8).forEach { println("    at $it") }
        }
        override fun testFinished(description: Description) {
            if (description in failedNow) failed++ else {
                passed++
                println("ok   ${description.className.substringAfterLast('.')}.${description.methodName}")
            }
        }
    })
    // pku.tests.only: a comma-separated list of `Class` or `Class.method` (simple names) to run
    // alone, for working on a few tests; all of them run unless it is set.
    val only = System.getProperty("pku.tests.only")?.split(',')?.map { it.trim() }?.filter { it.isNotEmpty() }.orEmpty()
    val request = org.junit.runner.Request.classes(*classes.map { Class.forName(it) }.toTypedArray())
    val result = core.run(
        if (only.isEmpty()) request else request.filterWith(object : org.junit.runner.manipulation.Filter() {
            override fun shouldRun(description: Description): Boolean {
                if (description.methodName == null) return description.children.any { shouldRun(it) }
                val simple = description.className.substringAfterLast('.')
                return only.any { it == simple || it == "$simple.${description.methodName}" }
            }
            override fun describe() = "only $only"
        }),
    )
    // A failure outside any test (a class that cannot load) counts too.
    val outside = result.failureCount - failed
    if (outside > 0) failed += outside
    if (classes.isEmpty()) failed++
    watchdog.interrupt()
    // JUnit's own count, then the line the test command reads.
    println("Tests run: ${result.runCount}, Failures: ${result.failureCount}, Ignored: ${result.ignoreCount} (${result.runTime / 1000} s)")
    println("$passed passed, $failed failed")
    exitProcess(if (failed == 0) 0 else 1)
}
