import FilmCore
import Foundation
import ImageFiles
import System

/// Saves the composed preview frame for the `snapshot` request, safely for a socket that
/// anyone in its group can use: the PNG is only ever a new file (never replacing one, never
/// written through a symbolic link at its name), and only in a directory the configuration
/// lists (`snapshot.directories`; the request's directory must resolve — symbolic links
/// followed — to one of them or a directory inside one).
enum Snapshot {
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// `kept`: the photo and state directories; a snapshot never goes there, whatever
    /// `allowed` says.
    static func write(_ frame: RGBImage, to path: String, allowed: [String], kept: [String]) throws(Refusal) {
        func refuse(_ why: String) -> Refusal { Refusal(description: "\(path): \(why)") }
        let name = (path as NSString).lastPathComponent
        let parent = (path as NSString).deletingLastPathComponent
        guard path.hasPrefix("/"), !name.isEmpty, name != ".", name != "..", !path.hasSuffix("/") else {
            throw refuse("not a file path")
        }
        let allowedReal = allowed.compactMap(realPath)
        guard let parentReal = realPath(parent),
              allowedReal.contains(where: { parentReal == $0 || parentReal.hasPrefix($0 == "/" ? "/" : $0 + "/") }) else {
            throw refuse("snapshots may only be written to \(allowed.joined(separator: ", ")) (snapshot.directories in the configuration)")
        }
        if kept.compactMap(realPath).contains(where: { parentReal == $0 || parentReal.hasPrefix($0 + "/") }) {
            throw refuse("snapshots never go where the photos or the daemon's state are kept")
        }
        do {
            try ImageWriter.write(frame, to: parentReal + "/" + name, format: .png, replace: false)
        } catch ImageFileError.alreadyExists {
            throw refuse("a file of that name exists; a snapshot never replaces a file")
        } catch {
            throw Refusal(description: "\(error)")
        }
    }

    /// The path with every symbolic link resolved, or nil when it does not exist.
    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
