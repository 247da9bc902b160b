import Appliance
print("loopixd")
