"""The coordinators, each on the one coordinator runtime over its internal topic: groups, transactions,
share groups (and the schema registry's state, in trafka/broker/schemas)."""
