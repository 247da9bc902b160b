print("loopix")
