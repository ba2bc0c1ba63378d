#!/usr/bin/python3
"""An idle gRPC client in another process, as a Loki frontend's pooled connection is: Python's
grpcio (Debian's python3-grpcio) connects, makes one call, prints "connected", then holds
the channel open without calls until its stdin closes.

Usage: idle_grpc_client.py HOST:PORT
"""
import sys

import grpc

channel = grpc.insecure_channel(sys.argv[1])
call = channel.unary_unary("/proto.IngestLimits/GetAssignedPartitions",
                           request_serializer=lambda b: b, response_deserializer=lambda b: b)
call(b"", timeout=10)
print("connected", flush=True)
sys.stdin.read()  # until the test closes our stdin
channel.close()
