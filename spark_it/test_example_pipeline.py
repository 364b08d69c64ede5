"""The example pipeline of docs/spark.md, run against trafka; and the doc shows it verbatim."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from spark_it import example_pipeline
from spark_it.harness import QUERY_TIMEOUT_S, consume_all, create_topic, produce

HERE = Path(__file__).resolve().parent
DOC = HERE.parent / "docs" / "spark.md"


def test_docs_include_the_example_pipeline_verbatim():
    source = (HERE / "example_pipeline.py").read_text()
    assert f"```python\n{source}```" in DOC.read_text(), "docs/spark.md must show spark_it/example_pipeline.py as is"


def views(pages: list[str]) -> list[dict]:
    return [{"value": json.dumps({"user": f"u{i}", "page": p}).encode()} for i, p in enumerate(pages)]


def current_counts(bootstrap: str, topic: str, expected_records: int) -> dict[str, int]:
    latest = {}
    for r in consume_all(bootstrap, topic, expected_records):
        value = json.loads(r.value)
        assert value["page"] == r.key.decode()
        latest[value["page"]] = value["views"]
    return latest


@pytest.mark.timeout(240)
def test_example_pipeline_counts_page_views_across_restarts(spark, bootstrap, topic_name, tmp_path):
    source, sink = topic_name("page-views"), topic_name("page-view-counts")
    create_topic(bootstrap, source, partitions=2)
    create_topic(bootstrap, sink, partitions=1)
    checkpoint = str(tmp_path / "checkpoint")

    def run():
        query = example_pipeline.start(spark, bootstrap, source, sink, checkpoint, available_now=True)
        assert query.awaitTermination(QUERY_TIMEOUT_S), "pipeline did not finish"

    first = ["/home", "/home", "/docs", "/home", "/pricing", "/docs"]
    produce(bootstrap, source, views(first))
    run()
    assert current_counts(bootstrap, sink, 3) == dict(Counter(first))

    second = ["/docs", "/blog", "/docs"]
    produce(bootstrap, source, views(second))
    run()  # a restart: the counts so far come back from the checkpoint's state store
    assert current_counts(bootstrap, sink, 5) == dict(Counter(first + second))
