"""A broker on trio in a background thread of the test process (`TrafkaBroker(in_process=True)`).

Same broker as `trafka serve`, minus the process: no interpreter start, no imports after the
first, so a start takes milliseconds and a suite can afford a fresh broker per test. Control
calls (clock, faults, snapshot) run on the broker's trio thread through its trio token, so
they see and change state between two requests, never in the middle of one.
"""

from __future__ import annotations

import logging
import threading
from functools import partial
from pathlib import Path

import trio

log = logging.getLogger("trafka.testing")


class _ThreadLog(logging.Handler):
    """The broker thread's log lines, into the same file `TrafkaBroker.log_text` reads."""

    def __init__(self, path: Path, thread_id: int):
        super().__init__()
        self.thread_id = thread_id
        self.stream = open(path, "a", encoding="utf-8")
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread_id:
            self.stream.write(self.format(record) + "\n")
            self.stream.flush()

    def close(self) -> None:
        self.stream.close()
        super().close()


class InProcessBroker:
    """One run of a broker in a thread: `start()` returns the bound port; then `stop`/`kill`."""

    def __init__(self, data_dir: Path, config: dict[str, object], host: str, port: int, log_path: Path):
        self.data_dir = data_dir
        self.config = config
        self.host = host
        self.port = port
        self.log_path = log_path
        self.broker = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope: trio.CancelScope | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._clean = True
        self._thread: threading.Thread | None = None

    def start(self, timeout: float) -> int:
        self._thread = threading.Thread(target=self._run, name=f"trafka-broker-{self.data_dir.name}", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError(f"in-process broker did not start within {timeout} s")
        if self._error is not None:
            self._thread.join()
            raise self._error
        return self.port

    def _run(self) -> None:
        from trafka.broker.config import BrokerConfig
        from trafka.broker.cluster.nodes import open_broker
        from trafka.broker.server import serve
        from trafka.console.server import console_service, schema_registry_service
        from trafka.restproxy.service import rest_proxy_service

        handler = _ThreadLog(self.log_path, threading.get_ident())
        logger = logging.getLogger("trafka")
        logger.addHandler(handler)
        if logger.level == logging.NOTSET or logger.level > logging.INFO:
            logger.setLevel(logging.INFO)
        try:
            config = BrokerConfig.from_sources([f"{k}={v}" for k, v in self.config.items()], [])
            self.broker = open_broker(self.data_dir, config)
        except BaseException as exc:
            self._error = exc
            logger.removeHandler(handler)
            handler.close()
            self._ready.set()
            return

        async def main():
            self._token = trio.lowlevel.current_trio_token()
            async with trio.open_nursery() as nursery:
                self._scope = nursery.cancel_scope
                self.port = await nursery.start(partial(serve, self.broker, self.host, self.port, services=[console_service, schema_registry_service, rest_proxy_service]))
                log.info("trafka listening on %s:%d (in process, data in %s)", self.host, self.port, self.data_dir)
                self._ready.set()

        try:
            trio.run(main)
        except BaseException as exc:
            while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
                exc = exc.exceptions[0]  # nested nurseries nest the groups; keep the cause
            if not self._ready.is_set():
                self._error = exc
            else:
                log.exception("in-process broker stopped with an error")
        finally:
            try:
                self.broker.cluster.close(clean=self._clean)
            except Exception:
                log.exception("closing the in-process broker's logs failed")
            logger.removeHandler(handler)
            handler.close()
            self._ready.set()

    def call(self, fn, *args):
        """Run `fn(*args)` on the broker's trio thread, between two requests; return its result."""
        if self._token is None or not self.alive:
            raise RuntimeError("the broker is not running")
        return trio.from_thread.run_sync(fn, *args, trio_token=self._token)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 15) -> None:
        """Cancel serving and close the logs cleanly (as SIGTERM does)."""
        self._finish(clean=True, timeout=timeout)

    def kill(self) -> None:
        """Stop at once and leave the logs as a killed process would: no flush, no marker."""
        self._finish(clean=False, timeout=15)

    def _finish(self, clean: bool, timeout: float) -> None:
        if not self.alive:
            return
        self._clean = clean
        try:
            trio.from_thread.run_sync(self._scope.cancel, trio_token=self._token)
        except trio.RunFinishedError:
            pass
        self._thread.join(timeout)
