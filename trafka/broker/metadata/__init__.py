"""Cluster metadata beside the topics: finalized features, producer-id blocks, client quotas,
dynamic broker configs, group configs and topic configs as DescribeConfigs reports them."""
