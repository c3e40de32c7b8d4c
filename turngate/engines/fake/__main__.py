from turngate.engines.fake.engine import entry

entry()
