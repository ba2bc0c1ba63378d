#!/usr/bin/python3
"""One HTTPS GET with Python's ssl module, as a client of limitsd's HTTP listener over TLS.
Prints "<status> <body>" or "ERROR <reason>"; exit 0 either way (the test reads the line).

Usage: https_get.py URL CA_FILE [--cert CERT --key KEY] [--max-tls12]
"""
import http.client
import ssl
import sys
import urllib.parse


def main():
    url, ca = sys.argv[1], sys.argv[2]
    args = sys.argv[3:]
    ctx = ssl.create_default_context(cafile=ca)
    if "--cert" in args:
        ctx.load_cert_chain(args[args.index("--cert") + 1], args[args.index("--key") + 1])
    if "--max-tls12" in args:
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    u = urllib.parse.urlparse(url)
    try:
        conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=10)
        conn.request("GET", u.path)
        r = conn.getresponse()
        print(r.status, r.read().decode().strip())
    except Exception as e:  # noqa: BLE001 - the test reads the reason
        print("ERROR", type(e).__name__, e)


if __name__ == "__main__":
    main()
