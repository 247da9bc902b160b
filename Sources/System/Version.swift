public let loopixVersion = "0.9.0"
