#!/usr/bin/python3
# A real DNS server for the tests (Debian's python3-dnslib): answers on 127.0.0.1, over UDP
# and TCP on the same port, from a JSON file the test writes and may rewrite at any time
# (it is read again for every query):
#   {"records": {"example.com": [{"type": "TXT", "value": "v=spf1 -all"},
#                                {"type": "MX", "value": "mail.example.com", "priority": 10},
#                                {"type": "A", "value": "192.0.2.1"}]},
#    "drop": ["slow.example.com"]}
# A name in "drop" gets no answer at all (the client times out); a name without records is
# NXDOMAIN; a known name without records of the asked type is an empty answer (NODATA).
# TXT values longer than 255 bytes are split into strings of 255 (RFC 7208 3.3). A UDP
# answer longer than 512 bytes is sent truncated (TC, RFC 1035 4.2.1), so clients ask
# again over TCP.
# Prints its port once both sockets listen. Usage: dns_server.py <zone.json>
import json, socket, socketserver, struct, sys, threading
from dnslib import A, AAAA, MX, QTYPE, RCODE, RR, TXT, DNSRecord

zone_file = sys.argv[1]


def answer(data):
    request = DNSRecord.parse(data)
    reply = request.reply()
    name = str(request.q.qname).rstrip('.').lower()
    try:
        with open(zone_file) as f:
            zone = json.load(f)
    except (OSError, ValueError):
        reply.header.rcode = RCODE.SERVFAIL
        return reply.pack()
    if name in [n.lower() for n in zone.get('drop', [])]:
        return None
    records = {k.rstrip('.').lower(): v for k, v in zone.get('records', {}).items()}
    if name not in records:
        reply.header.rcode = RCODE.NXDOMAIN
        return reply.pack()
    qtype = QTYPE[request.q.qtype]
    for r in records[name]:
        if r['type'] != qtype:
            continue
        v = r['value']
        if qtype == 'TXT':
            raw = v.encode()
            rdata = TXT([raw[i:i + 255] for i in range(0, len(raw), 255)] or [b''])
        elif qtype == 'MX':
            rdata = MX(v, r.get('priority', 10))
        elif qtype == 'A':
            rdata = A(v)
        elif qtype == 'AAAA':
            rdata = AAAA(v)
        else:
            continue
        reply.add_answer(RR(request.q.qname, request.q.qtype, rdata=rdata, ttl=60))
    return reply.pack()


class Udp(socketserver.BaseRequestHandler):
    def handle(self):
        data, sock = self.request
        out = answer(data)
        if out is None:
            return
        if len(out) > 512:
            reply = DNSRecord.parse(out)
            reply.rr = []
            reply.header.tc = 1
            out = reply.pack()
        sock.sendto(out, self.client_address)


class Tcp(socketserver.BaseRequestHandler):
    def handle(self):
        while True:
            head = self.request.recv(2)
            if len(head) < 2:
                return
            (n,) = struct.unpack('!H', head)
            data = b''
            while len(data) < n:
                chunk = self.request.recv(n - len(data))
                if not chunk:
                    return
                data += chunk
            out = answer(data)
            if out is None:
                return
            self.request.sendall(struct.pack('!H', len(out)) + out)


class ThreadedUdp(socketserver.ThreadingMixIn, socketserver.UDPServer):
    daemon_threads = True


class ThreadedTcp(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    for _ in range(50):
        udp = ThreadedUdp(('127.0.0.1', 0), Udp)
        port = udp.server_address[1]
        try:
            tcp = ThreadedTcp(('127.0.0.1', port), Tcp)
            break
        except OSError:
            udp.server_close()
    else:
        sys.exit('no port free for both UDP and TCP')
    for server in (udp, tcp):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print(port, flush=True)
    threading.Event().wait()


main()
