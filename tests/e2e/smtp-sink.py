#!/usr/bin/python3
# A real SMTP server for the e2e suite (Debian's python3-aiosmtpd): accepts every message
# on 127.0.0.1, writes each one to <dir>/NNNN.eml with NNNN.json beside it
# ({"mail_from", "rcpt_tos", "helo"}), and prints its port once it listens.
# Usage: smtp-sink.py <dir>
import asyncio, json, os, sys
from aiosmtpd.smtp import SMTP

outdir = sys.argv[1]

class Handler:
    count = 0
    async def handle_DATA(self, server, session, envelope):
        Handler.count += 1
        base = os.path.join(outdir, '%04d' % Handler.count)
        with open(base + '.eml.tmp', 'wb') as f:
            f.write(envelope.original_content)
        with open(base + '.json.tmp', 'w') as f:
            json.dump({'mail_from': envelope.mail_from, 'rcpt_tos': envelope.rcpt_tos,
                       'helo': session.host_name}, f)
        os.rename(base + '.eml.tmp', base + '.eml')
        os.rename(base + '.json.tmp', base + '.json')
        return '250 2.0.0 Message accepted'

async def main():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(Handler()), '127.0.0.1', 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()

asyncio.run(main())
