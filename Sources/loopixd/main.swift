import Appliance
import Foundation

exit(Daemon.main(Array(CommandLine.arguments.dropFirst())))
