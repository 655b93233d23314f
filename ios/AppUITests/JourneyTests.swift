import XCTest

let seats = "{\"canteen\":\"学一食堂\",\"seats\":2,\"time\":\"12:00\"}"

/// The same journeys as the Android UI tests, on the real app in the simulator, against the
/// scripted model server on 127.0.0.1. Elements are found by accessibility identifiers; every
/// text comes from the core.
final class JourneyTests: XCTestCase {
    private var model: ScriptedModel?

    override func setUp() {
        continueAfterFailure = false
    }

    override func tearDown() {
        model?.close()
    }

    /// A fresh app with the sample plugins, terms accepted, pointed at `model`.
    /// `screen` is one of Platform.openScreen's routes (`system-permissions`, …), for the tabs
    /// iOS folds under More.
    private func launch(_ model: ScriptedModel?, reset: Bool = true, screen: String? = nil) -> XCUIApplication {
        let app = XCUIApplication()
        var environment = ["HARNESS_SAMPLE_PLUGINS": "1", "HARNESS_MODEL_NAME": "qwen-plus", "HARNESS_API_KEY": "sk-ui"]
        if reset { environment["HARNESS_RESET"] = "1" }
        if let screen { environment["HARNESS_OPEN_SCREEN"] = screen }
        if let model { environment["HARNESS_MODEL_ENDPOINT"] = model.endpoint }
        app.launchEnvironment = environment
        app.launch()
        return app
    }

    private func send(_ app: XCUIApplication, _ text: String) {
        // The app opens on Today (the bar's first tab); the chat is the second.
        app.tabBars.buttons.element(boundBy: 1).tap()
        let draft = app.textFields["chat.draft"].firstMatch
        XCTAssertTrue(draft.waitForExistence(timeout: 10))
        draft.tap()
        draft.typeText(text)
        app.buttons["chat.send"].tap()
    }

    /// Waits for the answer's button and for the 500 ms guard to let taps count.
    private func answerButton(_ app: XCUIApplication, _ answer: String) -> XCUIElement {
        let button = app.buttons["answer-\(answer)"]
        XCTAssertTrue(button.waitForExistence(timeout: 10), "the approval sheet with \(answer)")
        let enabled = expectation(for: NSPredicate(format: "isEnabled == true"), evaluatedWith: button)
        wait(for: [enabled], timeout: 5)
        return button
    }

    private func reservingModel(_ reply: String) throws -> ScriptedModel {
        let model = try ScriptedModel(toolCall(id: "call_1", name: "canteen__reserve", arguments: seats), answer(reply))
        self.model = model
        return model
    }

    func testAllowOnTheSheetRunsTheToolAndTheChatShowsItsResult() throws {
        let model = try reservingModel("订好了：两个座位。")
        let app = launch(model)
        send(app, "帮我在学一订两个座位")
        // Exactly the answers the core offers for a write that asks.
        XCTAssertTrue(app.otherElements["approval.inputs"].waitForExistence(timeout: 10) || app.staticTexts["approval.inputs"].exists)
        XCTAssertFalse(app.buttons["answer-allowOnce"].exists)
        answerButton(app, "allow").tap()
        XCTAssertTrue(app.staticTexts["订好了：两个座位。"].waitForExistence(timeout: 10))
        XCTAssertFalse(app.buttons["answer-allow"].exists, "the sheet closed")
        XCTAssertTrue(app.staticTexts.containing(NSPredicate(format: "label CONTAINS 'R-20261130-0042'")).firstMatch.exists)
        XCTAssertTrue(model.bodies[1].contains("R-20261130-0042"), model.bodies[1])
    }

    func testDenyOnTheSheetDeclinesTheCall() throws {
        let model = try reservingModel("I did not reserve the seats.")
        let app = launch(model)
        send(app, "帮我在学一订两个座位")
        answerButton(app, "deny").tap()
        XCTAssertTrue(app.staticTexts["I did not reserve the seats."].waitForExistence(timeout: 10))
        XCTAssertTrue(model.bodies[1].contains("The user declined this call."), model.bodies[1])
        XCTAssertFalse(model.bodies[1].contains("R-20261130-0042"))
    }

    func testAModeChangedInPluginDetailSurvivesARelaunch() throws {
        var app = launch(nil)
        app.tabBars.buttons.element(boundBy: 2).tap()
        app.buttons["plugin.canteen"].tap()
        let off = app.buttons["set-mode.canteen.write.off"]
        XCTAssertTrue(off.waitForExistence(timeout: 10))
        off.tap()
        let selected = NSPredicate(format: "value == 'off'")
        wait(for: [expectation(for: selected, evaluatedWith: app.descendants(matching: .any)["mode.write"])], timeout: 5)
        app.terminate()

        app = launch(nil, reset: false)
        app.tabBars.buttons.element(boundBy: 2).tap()
        app.buttons["plugin.canteen"].tap()
        let mode = app.descendants(matching: .any)["mode.write"]
        XCTAssertTrue(mode.waitForExistence(timeout: 10))
        XCTAssertEqual(mode.value as? String, "off")
    }

    func testAPendingMemoryIsApprovedFromTheInbox() throws {
        // Untrusted content first (the attached-documents list), then a memory: it waits.
        model = try ScriptedModel(
            toolCall(id: "call_1", name: "files__list", arguments: "{}"),
            toolCall(id: "call_2", name: "memory__write", arguments: "{\"text\":\"喜欢吃辣\"}"),
            answer("记下了，等你确认。"))
        let app = launch(model)
        send(app, "记住我喜欢吃辣")
        // The memory's own write may ask, depending on its mode: allow it.
        let allow = app.buttons["answer-allow"]
        if allow.waitForExistence(timeout: 5) {
            answerButton(app, "allow").tap()
        }
        XCTAssertTrue(app.staticTexts["记下了，等你确认。"].waitForExistence(timeout: 10))
        // The memory tab carries the pending badge; approve there.
        let memoryTab = app.tabBars.buttons.element(boundBy: 3)
        XCTAssertEqual(memoryTab.value as? String, "1")
        memoryTab.tap()
        let approve = app.buttons.matching(NSPredicate(format: "identifier BEGINSWITH 'decide-memory.' AND identifier ENDSWITH '.true'")).firstMatch
        XCTAssertTrue(approve.waitForExistence(timeout: 10))
        approve.tap()
        let gone = expectation(for: NSPredicate(format: "exists == false"), evaluatedWith: approve)
        wait(for: [gone], timeout: 5)
        XCTAssertNotEqual(memoryTab.value as? String, "1")
    }

    func testNotificationsAreAskedOnlyAfterATapAndTheAnswerIsReported() throws {
        let app = launch(nil, screen: "system-permissions")
        addUIInterruptionMonitor(withDescription: "notification permission") { alert in
            // The system's own prompt: its second button allows.
            let allow = alert.buttons.element(boundBy: 1)
            guard allow.exists else { return false }
            allow.tap()
            return true
        }
        let state = app.descendants(matching: .any)["permission.notifications"]
        XCTAssertTrue(state.waitForExistence(timeout: 10))
        XCTAssertEqual(state.value as? String, "unknown", "nothing is asked before the tap")
        app.buttons["request-permission.notifications"].tap()
        app.tap() // lets the interruption monitor see the system's alert
        wait(for: [expectation(for: NSPredicate(format: "value == 'granted'"), evaluatedWith: state)], timeout: 10)
        XCTAssertFalse(app.buttons["request-permission.notifications"].exists)
        // iOS has no exact alarms: no fix is offered for them.
        XCTAssertEqual(app.descendants(matching: .any)["permission.exactAlarm"].value as? String, "denied")
        XCTAssertFalse(app.buttons["open-permission-settings.exactAlarm"].exists)
    }
}
