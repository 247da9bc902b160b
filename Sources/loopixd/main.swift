import Appliance
import Doctor
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
// The doctor reads the machine and exits; everything else is the daemon.
exit(arguments.contains("--doctor") ? Doctor.main(arguments) : Daemon.main(arguments))
