package edu.pku.harness

import edu.pku.harness.core.RefusalCode
import org.junit.Test
import kotlin.test.assertEquals

/** The app's shipped TypeScript plugins, run by the core's QuickJS through the real library,
 *  reaching the campus simulator on this machine. */
class TypeScriptPluginTest {
    private fun appHarness(): Harness {
        val harness = Harness.openForDevelopment(
            newDataDir(),
            ScriptedPlatform(),
            DevelopmentOptions(samplePlugins = false, campusOrigin = startCampusSimulator()),
        )
        harness.setConsent(Consent(termsAccepted = true, met = emptyList()))
        harness.openConversation("c1")
        return harness
    }

    @Test fun the_canteens_crowding_comes_from_a_typescript_plugin_for_the_agent_and_the_tap() = runTest {
        val harness = appHarness()
        val crowd =
            """{"canteens":[{"fullPercent":87,"name":"学一食堂","present":692,"seats":800,"warning":"拥挤"},""" +
                """{"fullPercent":27,"name":"农园食堂","present":318,"seats":1200},""" +
                """{"fullPercent":18,"name":"燕南食堂","present":105,"seats":600}],"takenAt":"2026-12-01 11:50"}"""
        assertEquals(crowd, harness.invokeAsAgent("c1", "canteen.crowd", "{}").resultJson())
        assertEquals(crowd, harness.invokeAsUser("canteen.crowd", "{}").resultJson())
        harness.shutdown()
    }

    @Test fun the_library_search_answers_call_numbers_and_a_bad_input_is_refused_before_it_runs() = runTest {
        val harness = appHarness()
        assertEquals(
            """{"books":[{"author":"Thomas H. Cormen","callNumber":"TP301.6/C81","id":"1002","publisher":"机械工业出版社",""" +
                """"title":"算法导论","year":"2013"}],"page":1,"total":1}""",
            harness.invokeAsAgent("c1", "library.search", """{"query":"算法"}""").resultJson(),
        )
        assertEquals(
            RefusalCode.INVALID_INPUT,
            harness.invokeAsAgent("c1", "classrooms.free", """{"building":"五教"}""").refusal(),
        )
        harness.shutdown()
    }
}
