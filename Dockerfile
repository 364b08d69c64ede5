# trafka in a container. BASE is a build argument so the image can be built from a locally
# bootstrapped base where no image registry is reachable (see docs/testing.md):
#   docker build -t trafka .
#   podman build --isolation chroot --format docker --build-arg BASE=localhost/trafka-base:bookworm -t trafka .
# Any Debian-like base with python3 >= 3.11 (and its venv module) and useradd works.
# PIP_CA_BUNDLE: a CA file, mounted into the build, for pip behind a TLS-intercepting proxy.
ARG BASE=python:3.11-slim
FROM ${BASE}
ARG PIP_CA_BUNDLE=""

# The venv keeps trafka off the base's own Python (Debian's python3 is "externally managed").
ENV PATH=/opt/trafka/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
WORKDIR /opt/trafka
COPY pyproject.toml README.md ./
COPY trafka ./trafka
RUN if [ -n "$PIP_CA_BUNDLE" ]; then export PIP_CERT="$PIP_CA_BUNDLE"; fi \
    && python3 -m venv /opt/trafka/venv \
    && pip install --no-cache-dir --disable-pip-version-check . \
    && rm -rf build ./*.egg-info \
    && useradd --no-create-home --no-log-init --home-dir /var/lib/trafka --uid 10001 trafka \
    && mkdir -p /var/lib/trafka && chown trafka /var/lib/trafka

USER trafka
VOLUME /var/lib/trafka
EXPOSE 9092
# The console, JSON API and /metrics (console.port; docs/console.md): publish with -p 9644:9644.
EXPOSE 9644
# The schema registry, Confluent's Schema Registry API (schema.registry.port; docs/schema-registry.md):
# publish with -p 8081:8081.
EXPOSE 8081
# The REST proxy, Confluent's REST Proxy API v2 and v3 (rest.proxy.port; docs/rest-proxy.md):
# publish with -p 8082:8082.
EXPOSE 8082
# The host (and port) clients are told to connect to (broker settings advertised.host and
# advertised.port); empty means the bound ones. Set them to how clients reach the container,
# e.g. -e TRAFKA_ADVERTISED_HOST=localhost with -p 9092:9092.
# TRAFKA_HOST and TRAFKA_PORT are the bound address; leave them be unless the container
# shares the host's network.
ENV TRAFKA_ADVERTISED_HOST="" \
    TRAFKA_ADVERTISED_PORT="" \
    TRAFKA_HOST=0.0.0.0 \
    TRAFKA_PORT=9092
# SASL and TLS (docs/security.md, "Docker"): mount a Kafka-style properties file with listeners,
# ssl.* and sasl.jaas.config and run `trafka serve --config-file /etc/trafka/server.properties
# --data-dir /var/lib/trafka`; keep a PLAINTEXT or SASL_PLAINTEXT listener on $TRAFKA_PORT for the
# health check (ApiVersions needs no login), or give --health-cmd none.
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 \
    CMD ["sh", "-c", "exec trafka healthcheck --host 127.0.0.1 --port \"$TRAFKA_PORT\""]
CMD ["sh", "-c", "exec trafka serve --host \"$TRAFKA_HOST\" --port \"$TRAFKA_PORT\" --data-dir /var/lib/trafka ${TRAFKA_ADVERTISED_HOST:+--config advertised.host=$TRAFKA_ADVERTISED_HOST} ${TRAFKA_ADVERTISED_PORT:+--config advertised.port=$TRAFKA_ADVERTISED_PORT}"]
