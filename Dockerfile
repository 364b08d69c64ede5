# trafka in a container. BASE is a build argument so the image can be built from a locally
# bootstrapped base where no image registry is reachable (see docs/testing.md).
ARG BASE=python:3.11-slim
FROM ${BASE}

RUN useradd --system --create-home --uid 10001 trafka
WORKDIR /opt/trafka
COPY pyproject.toml README.md ./
COPY trafka ./trafka
RUN python3 -m pip install --no-cache-dir . && mkdir -p /var/lib/trafka && chown trafka /var/lib/trafka

USER trafka
VOLUME /var/lib/trafka
EXPOSE 9092
ENV TRAFKA_ADVERTISED_HOST=""
CMD ["sh", "-c", "exec trafka serve --host 0.0.0.0 --port 9092 --data-dir /var/lib/trafka ${TRAFKA_ADVERTISED_HOST:+--config advertised.host=$TRAFKA_ADVERTISED_HOST}"]
