from fake_engines.engine import entry

entry()
