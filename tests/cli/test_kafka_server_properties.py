"""Kafka 4's own KRaft combined-mode config/server.properties starts trafka: the settings with an
effect are honoured (log.dirs, listeners, num.partitions, retention...), the ones without are
named in one warning line, and a name Kafka does not have is refused with the closest one."""

import socket
import subprocess
import sys


from confluent_kafka.admin import AdminClient

# The settings of the file Kafka 4 ships (comments left out); only the two ports are free ones
# instead of 9092/9093 so the test never collides with anything on the machine.
KAFKA_4_SERVER_PROPERTIES = """\
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=localhost:{controller}
listeners=PLAINTEXT://:{port},CONTROLLER://:{controller}
inter.broker.listener.name=PLAINTEXT
advertised.listeners=PLAINTEXT://localhost:{port},CONTROLLER://localhost:{controller}
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs={log_dirs}
num.partitions=3
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
log.retention.hours=168
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_kafka_4_server_properties_starts_trafka(tmp_path):
    port, controller = _free_port(), _free_port()
    path = tmp_path / "server.properties"
    path.write_text(KAFKA_4_SERVER_PROPERTIES.format(port=port, controller=controller, log_dirs=tmp_path / "kraft-logs"))
    process = subprocess.Popen([sys.executable, "-m", "trafka", "serve", "--config-file", str(path), "--config", "console.port=-1"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert f"trafka listening on 127.0.0.1:{port}" in process.stdout.readline()
        metadata = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"}).list_topics("props-topic", timeout=20)
        assert len(metadata.topics["props-topic"].partitions) == 3  # num.partitions
        assert [(b.id, b.host, b.port) for b in metadata.brokers.values()] == [(1, "localhost", port)]
        assert (tmp_path / "kraft-logs" / "meta.properties").exists()  # log.dirs is the data dir
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    warnings = [line for line in err.splitlines() if "without effect" in line]
    assert len(warnings) == 1, err
    for name in ("process.roles", "num.network.threads", "controller.quorum.bootstrap.servers",
                 "offsets.topic.replication.factor"):
        assert name in warnings[0]
    assert "Traceback" not in err


def test_a_name_kafka_does_not_have_is_refused_with_the_closest_one(tmp_path):
    result = subprocess.run([sys.executable, "-m", "trafka", "serve", "--data-dir", str(tmp_path / "d"),
                             "--config", "num.partitons=3"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "unknown setting 'num.partitons'; did you mean 'num.partitions'?" in result.stderr


# Kafka 4 settings a server.properties carries for the group protocols and for OAUTHBEARER
# validated against an identity provider's JWKS (KIP-768), and transaction verification.
KAFKA_4_MORE_SETTINGS = {
    "group.coordinator.rebalance.protocols": "classic,consumer,share",
    "transaction.partition.verification.enable": "false",
    "sasl.oauthbearer.expected.issuer": "https://idp.example/realms/kafka",
    "sasl.oauthbearer.expected.audience": "kafka,kafka-admin",
    "sasl.oauthbearer.scope.claim.name": "scp",
    "sasl.oauthbearer.sub.claim.name": "client_id",
    "sasl.oauthbearer.jwks.endpoint.url": "https://idp.example/realms/kafka/protocol/openid-connect/certs",
    "sasl.oauthbearer.jwks.endpoint.refresh.ms": "600000",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms": "200",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms": "20000",
    "sasl.oauthbearer.clock.skew.seconds": "60",
    "sasl.oauthbearer.token.endpoint.url": "https://idp.example/realms/kafka/protocol/openid-connect/token",
    "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class":
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
    "sasl.login.callback.handler.class": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
    "sasl.login.connect.timeout.ms": "10000",
    "sasl.login.read.timeout.ms": "10000",
}


def test_kafka_4_group_protocol_oauthbearer_and_verification_settings_start_trafka(tmp_path):
    """`trafka serve` takes them (it refused each as unknown): transaction verification is
    applied, the others are named in the one without-effect warning."""
    args = [arg for name, value in KAFKA_4_MORE_SETTINGS.items() for arg in ("--config", f"{name}={value}")]
    process = subprocess.Popen([sys.executable, "-m", "trafka", "serve", "--data-dir", str(tmp_path / "d"), "--port", "0",
                                "--config", "console.port=-1", "--config", "schema.registry.port=-1", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "trafka listening on" in process.stdout.readline()
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    [warning] = [line for line in err.splitlines() if "without effect" in line]
    for name in KAFKA_4_MORE_SETTINGS:
        if name != "transaction.partition.verification.enable":
            assert name in warning, name
    assert "transaction.partition.verification.enable" not in warning
    assert "Traceback" not in err


def test_leaving_the_classic_protocol_out_is_refused_as_kafka_refuses_it(tmp_path):
    result = subprocess.run([sys.executable, "-m", "trafka", "serve", "--data-dir", str(tmp_path / "d"),
                             "--config", "group.coordinator.rebalance.protocols=consumer"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "Disabling the 'classic' protocol is not supported." in result.stderr
