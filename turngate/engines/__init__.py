"""Engines: the fake engines that play scripted turns, the readers of what engines print, the
model server and the launchers of the real CLIs."""
