"""The cluster: the controller (where each partition lives), replication between the brokers of
a simulated cluster, the nodes themselves, and what the cluster says about itself to clients."""
