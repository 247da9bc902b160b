import Foundation
import LoopixTool

exit(LoopixCommand.main(Array(CommandLine.arguments.dropFirst())))
