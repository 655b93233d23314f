"""Merges the app's AndroidManifest.xml with its libraries' (the AARs'), as the Android Gradle
plugin's manifest merger does for what this app's libraries declare: the application id, the
SDK levels and the version, every class name made absolute, and each library's permissions and
components (androidx.startup's InitializationProvider is declared by several libraries: their
meta-data rows are merged into one provider). Used by scripts/build-android-app.sh.

  merge_manifest.py OUT APP_MANIFEST NAMESPACE APPLICATION_ID MIN_SDK TARGET_SDK VERSION_CODE
                    VERSION_NAME [LIBRARY_MANIFEST ...]
"""

import sys
import xml.etree.ElementTree as ET

ANDROID = "http://schemas.android.com/apk/res/android"
TOOLS = "http://schemas.android.com/tools"
NAME = f"{{{ANDROID}}}name"
COMPONENTS = ("activity", "activity-alias", "provider", "receiver", "service", "meta-data", "uses-library")


def absolute(name, package):
    if name.startswith("."):
        return package + name
    if "." not in name:
        return package + "." + name
    return name


def clean(element, package, application_id, is_app):
    """Placeholders filled, tools: attributes dropped, class names absolute."""
    for child in element.iter():
        for key in list(child.attrib):
            if key.startswith(f"{{{TOOLS}}}"):
                del child.attrib[key]
                continue
            child.attrib[key] = child.attrib[key].replace("${applicationId}", application_id)
        if child.tag in COMPONENTS[:5] and NAME in child.attrib:
            child.attrib[NAME] = absolute(child.attrib[NAME], package)
    return element


def main():
    out, app_path, namespace, application_id, min_sdk, target_sdk, code, version = sys.argv[1:9]
    ET.register_namespace("android", ANDROID)
    ET.register_namespace("tools", TOOLS)
    app = ET.parse(app_path).getroot()
    clean(app, namespace, application_id, True)
    app.set("package", application_id)
    app.set(f"{{{ANDROID}}}versionCode", code)
    app.set(f"{{{ANDROID}}}versionName", version)
    sdk = ET.Element("uses-sdk", {f"{{{ANDROID}}}minSdkVersion": min_sdk, f"{{{ANDROID}}}targetSdkVersion": target_sdk})
    app.insert(0, sdk)
    application = app.find("application")
    if application.get(NAME):
        application.set(NAME, absolute(application.get(NAME), namespace))

    def key(element):
        return (element.tag, element.get(NAME))

    top = {key(e) for e in app if e.tag in ("uses-permission", "permission")}
    components = {key(e): e for e in application}
    for path in sys.argv[9:]:
        library = ET.parse(path).getroot()
        package = library.get("package")
        clean(library, package, application_id, False)
        for element in library:
            if element.tag in ("uses-permission", "permission") and key(element) not in top:
                top.add(key(element))
                app.insert(1, element)
        lib_application = library.find("application")
        if lib_application is None:
            continue
        for element in lib_application:
            if element.tag not in COMPONENTS:
                continue
            existing = components.get(key(element))
            if existing is None:
                components[key(element)] = element
                application.append(element)
                continue
            have = {key(c) for c in existing}
            for child in element:
                if key(child) not in have:
                    existing.append(child)
    ET.ElementTree(app).write(out, encoding="utf-8", xml_declaration=True)


if __name__ == "__main__":
    main()
