"""Page views per page, kept up to date: read a topic from trafka, aggregate, write to another topic.

Input records (topic page-views) have a JSON value {"user": "...", "page": "..."}. Output records
(topic page-view-counts) have the page as key and {"page": "...", "views": N} as value; each
micro-batch writes the pages whose count changed, so the latest record per key is the current count.

    spark-submit --packages org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.5 example_pipeline.py \
        127.0.0.1:9092 page-views page-view-counts /tmp/page-view-counts-checkpoint
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructType

PAGE_VIEW = StructType().add("user", StringType()).add("page", StringType())


def page_view_counts(spark, bootstrap_servers, source_topic):
    views = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("subscribe", source_topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    return (
        views.select(F.from_json(F.col("value").cast("string"), PAGE_VIEW).alias("view"))
        .groupBy("view.page")
        .count()
        .select(
            F.col("page").alias("key"),
            F.to_json(F.struct("page", F.col("count").alias("views"))).alias("value"),
        )
    )


def start(spark, bootstrap_servers, source_topic, sink_topic, checkpoint, available_now=False):
    writer = (
        page_view_counts(spark, bootstrap_servers, source_topic)
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("topic", sink_topic)
        .option("checkpointLocation", checkpoint)
        .outputMode("update")
    )
    if available_now:  # read what is there now, then stop (the tests use this)
        writer = writer.trigger(availableNow=True)
    return writer.start()


if __name__ == "__main__":
    bootstrap_servers, source_topic, sink_topic, checkpoint = sys.argv[1:5]
    spark = SparkSession.builder.appName("page-view-counts").getOrCreate()
    start(spark, bootstrap_servers, source_topic, sink_topic, checkpoint).awaitTermination()
