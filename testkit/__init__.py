"""What trafka's own test suites share: tests/, compat_tests/ and spark_it/ import it by package
(`from testkit.groups import ...`); it never ships (pyproject packages only `trafka*`, pytest puts
the repository root on sys.path through `pythonpath`).

- `drivers`: one small driver per real client (kafka-python, confluent-kafka, aiokafka, Java
  kafka-clients 3.9/4.3 through py4j, kcat) with the same produce/consume calls;
- `groups`: consumer-group members per Python client, polled in their own threads or processes;
- `txn_clients`: transactional producers and read_committed readers per client;
- `security`: each client's settings for the SASL/TLS listeners; `tls`: a throw-away PKI;
  `oauth_tokens`: unsecured JWTs for OAUTHBEARER; `acl`: brokers with an authorizer and ACL calls;
- `java`: the py4j bridge to the Java clients; `setup_deps`: fetches jars, kcat and chromium
  (`python -m testkit.setup_deps`);
- `kafka_python`: small kafka-python helpers (log offsets, reading a partition back);
- `coordinators`: the group and transaction coordinators in process on a manual clock;
- `storage`, `wire_samples`: helpers of those test folders.
Waiting for a condition is `trafka.testing.waiting.wait_until`; the raw-socket client is
`trafka.testing.rawwire`.
"""
