"""The op layer: every op is one OpDef record (registry.py); families live in folders
(math/, array/, nn/, ...) whose modules import only modules below them, with no import
cycles (tests/test_layering.py). See docs/architecture.md, "The op registry"."""
