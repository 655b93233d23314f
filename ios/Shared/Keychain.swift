import Foundation
import Harness
import Security

/// The model's API key and other secrets, in the Keychain on this device only, in the app
/// group's access group: the home-screen widget reads the campus sessions through the library
/// as the app does (an app group is a Keychain access group of each of its members).
enum Keychain {
    static let service = "edu.pku.harness"

    private static func query(_ key: String) -> [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: key,
            kSecAttrAccessGroup as String: AppGroup.identifier,
        ]
    }

    static func read(_ key: String) throws -> String? {
        var q = query(key)
        q[kSecReturnData as String] = true
        q[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(q as CFDictionary, &item)
        if status == errSecItemNotFound {
            return nil
        }
        guard status == errSecSuccess, let data = item as? Data else {
            throw HarnessError.Platform(reason: "the Keychain could not read \(key) (OSStatus \(status))")
        }
        return String(data: data, encoding: .utf8)
    }

    /// Updates the item if it exists, else adds it.
    static func write(_ key: String, _ value: String) throws {
        let data = Data(value.utf8)
        let attributes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status = SecItemUpdate(query(key) as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            var add = query(key)
            add.merge(attributes) { _, new in new }
            status = SecItemAdd(add as CFDictionary, nil)
        }
        guard status == errSecSuccess else {
            throw HarnessError.Platform(reason: "the Keychain could not save \(key) (OSStatus \(status))")
        }
    }

    static func delete(_ key: String) throws {
        let status = SecItemDelete(query(key) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw HarnessError.Platform(reason: "the Keychain could not delete \(key) (OSStatus \(status))")
        }
    }

    /// Every secret of the app: only for a fresh start the UI tests ask for (HARNESS_RESET=1).
    static func deleteAll() {
        let q: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccessGroup as String: AppGroup.identifier,
        ]
        SecItemDelete(q as CFDictionary)
    }
}
