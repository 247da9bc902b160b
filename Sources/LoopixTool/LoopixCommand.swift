import Foundation
import System

/// The `loopix` command: subcommands, help, and one-line errors with an exit status.
public enum LoopixCommand {
    public static let help = """
    Usage: loopix COMMAND [OPTIONS]

    Film looks for photos, from the Loopix camera firmware.

    Commands:
      develop        apply a film look to JPEG, PNG, HEIC photos or raw negatives (DNG)
      presets        list the looks (or export one as a .cube LUT)
      contact-sheet  one photo under every look, labelled, in a grid
      timelapse      an intervalometer's photos (or any) as an H.264 clip
      bench          measure the engine against ffmpeg, heif-enc and memcpy
      ctl            send a command to the running loopixd (status, capture, preset…)
      license        make keys, issue and verify Loopix Pro licenses
      doctor         check this machine's camera, screen, buttons, sensor, storage and service

    `loopix COMMAND --help` tells more; `loopix --version` prints the version.
    """

    /// Runs `arguments` (without the program name) and returns the exit status.
    public static func main(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            print(help)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        let wantsHelp = rest.contains("--help") || rest.contains("-h")
        do {
            switch command {
            case "--help", "-h", "help":
                print(help)
            case "--version":
                print("loopix \(loopixVersion)")
            case "develop":
                if wantsHelp { print(DevelopCommand.help); return 0 }
                return try DevelopCommand.run(DevelopCommand.parse(rest)) == 0 ? 0 : 1
            case "presets":
                if wantsHelp { print(PresetsCommand.help); return 0 }
                try PresetsCommand.run(rest)
            case "contact-sheet":
                if wantsHelp { print(ContactSheetCommand.help); return 0 }
                try ContactSheetCommand.run(rest)
            case "timelapse":
                if wantsHelp { print(TimelapseCommand.help); return 0 }
                return try TimelapseCommand.run(rest) == 0 ? 0 : 1
            case "bench":
                if wantsHelp { print(BenchCommand.help); return 0 }
                try BenchCommand.run(rest)
            case "ctl":
                if wantsHelp { print(CtlCommand.help); return 0 }
                try CtlCommand.run(rest)
            case "license":
                if wantsHelp { print(LicenseCommand.help); return 0 }
                try LicenseCommand.run(rest)
            case "doctor":
                if wantsHelp { print(DoctorCommand.help); return 0 }
                try DoctorCommand.run(rest)
            default:
                throw ToolError.usage("unknown command \"\(command)\" (try loopix --help)")
            }
            return 0
        } catch let error as ToolError {
            FileHandle.standardError.write(Data("loopix: \(error.message)\n".utf8))
            return error.status
        } catch {
            FileHandle.standardError.write(Data("loopix: \(error)\n".utf8))
            return 1
        }
    }
}
