"""One module per client, holding every adapter trafka's tests have for it: the cross-client
driver (produce/consume, testkit.drivers), the transactional producer and isolation-aware reader
(testkit.txn_clients), the group consumer (testkit.groups), the settings for a secured listener
and its round trip (testkit.security), and ACL-checked produce/consume (testkit.acl_clients).
`base` holds what they share. The scenario modules named above pick a client by name."""
