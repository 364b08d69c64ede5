"""The schema registry's broker side: its state in the compacted `_schemas` topic on the
coordinator runtime (registry.py), the registry's own record shapes (records.py) and each schema
type's parsing and compatibility rules (kinds.py). The REST API is the HTTP side's
(trafka/console/schema_api.py)."""
