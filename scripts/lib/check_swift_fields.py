"""Every field of every screen model is read by the SwiftUI app (no Swift compiler runs here).

Usage: python check_swift_fields.py HarnessCore.swift ALLOWLIST SWIFT_SOURCE_DIR...

Reads the generated Swift bindings of the core's types (HarnessCore.swift), collects the fields (`public var name: Type`) of each
screen-model struct below, and requires each field to appear as `.name` (a member access) in
some Swift file under the SWIFT_SOURCE_DIRs (the app's, its widget extension's, what both
share), unless ALLOWLIST names it as `Struct.field  reason`.
A field added in the core and forgotten in SwiftUI fails here naming the struct and field; an
allowlist entry for a field that no longer exists, or without a reason, fails too.
"""

import pathlib
import re
import sys

SCREEN_STRUCTS = [
    "ChatScreen", "ChatItem", "ToolCallView", "ApprovalSheet", "AnswerButton", "InputRow",
    "PluginsScreen", "PluginRow", "PluginDetail", "ModeRowView", "ToolRowView",
    "AddPluginScreen", "ConversationSettingsScreen", "ConsentScreen", "PermissionRow",
    "CloudRow", "ModelSettingsScreen", "MemoryInbox", "MemoryRowView", "ActivityScreen",
    "ActivityGroup", "ActivityCall", "EffectChoice", "FilterChoice", "AllowancesScreen",
    "AllowanceRowView", "SpendingScreen", "MoneyLimitRow", "UndoBar", "JobsScreen", "JobRow", "JobForm", "JobSourceOption", "JobScheduleOption",
    "JobComparisonOption", "Navigation", "NavItem", "Button", "Choice",
    "LabelValue", "RuleRow", "SignInSheet", "ElicitationSheet", "FormFieldRow", "FieldOption",
    "PageRow", "ElicitationButton", "CallImage", "CallLink", "CampusCheckScreen",
    "PayCodeScreen", "PayCode", "RideCodeScreen", "RideCode", "TodayScreen", "TodayTile",
    "PluginScreen", "ScreenSection", "WidgetModel", "WidgetSource",
]

FIELD = re.compile(r"^    public (?:var|let) (\w+)\s*:", re.M)


def struct_fields(bindings: str, name: str):
    start = re.search(rf"^public struct {name}\b[^{{]*\{{", bindings, re.M)
    if not start:
        return None
    # The struct's own declarations end at the first closing brace in column 0.
    end = bindings.index("\n}", start.end())
    return FIELD.findall(bindings[start.end():end])


def read_allowlist(path: pathlib.Path):
    allowed, problems = {}, []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 1)
        if len(parts) < 2 or "." not in parts[0]:
            problems.append(f"{path}:{number}: write `Struct.field  why it is not shown`")
            continue
        allowed[parts[0]] = (parts[1], number)
    return allowed, problems


def main(bindings_path, allowlist_path, *source_dirs) -> int:
    bindings = pathlib.Path(bindings_path).read_text()
    allowlist = pathlib.Path(allowlist_path)
    allowed, problems = read_allowlist(allowlist)
    sources = sorted(p for d in source_dirs for p in pathlib.Path(d).rglob("*.swift"))
    sources_dir = ", ".join(source_dirs)
    # Comments do not count as reading a field.
    code = "\n".join(re.sub(r"//[^\n]*", "", p.read_text()) for p in sources)
    used = set(re.findall(r"\.(\w+)", code))

    checked = 0
    known = set()
    for name in SCREEN_STRUCTS:
        fields = struct_fields(bindings, name)
        if fields is None:
            problems.append(f"{bindings_path}: no struct {name}: it was renamed or removed in the core; update SCREEN_STRUCTS in {__file__}")
            continue
        for field in fields:
            checked += 1
            key = f"{name}.{field}"
            known.add(key)
            if key in allowed or field in used:
                continue
            problems.append(
                f"{name}.{field} is never read by the SwiftUI app (no `.{field}` in {sources_dir}): "
                f"show it in the view for {name}, or list `{key}  <why it is not shown>` in {allowlist}")
    for key, (_, number) in allowed.items():
        if key not in known:
            problems.append(f"{allowlist}:{number}: {key} is not a field of a screen model any more; remove the line")

    print(f"{len(SCREEN_STRUCTS)} screen-model structs, {checked} fields: each read in {len(sources)} Swift files "
          f"under {sources_dir} or listed in {allowlist} ({len(allowed)} allowed)")
    for problem in problems:
        print(f"  {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) < 4:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
