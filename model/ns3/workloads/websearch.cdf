# Web search flow sizes (DCTCP's web search workload), as a cumulative distribution:
# "<flow size in bytes> <percent of flows at or below it>", linear between the points.
# Source: the HPCC simulator, alibaba-edu/High-Precision-Congestion-Control,
# traffic_gen/WebSearch_distribution.txt (commit 9cf8b9e8c8d04a3775e06c972c4699dcbce53c37),
# copied unchanged. Read by model/ns3/tern-ns3-fabric --workload.
0 0
10000 15
20000 20
30000 30
50000 40
80000 53
200000 60
1000000 70
2000000 80
5000000 90
10000000 97
30000000 100
