#!/usr/bin/env bash
# Test certificates made with OpenSSL: a throwaway CA and a server certificate it signs.
#   tests/support/make-test-certs.sh <dir> <name>
# Writes <dir>/ca.pem and <dir>/ca.key (once; reused by later calls for the same dir) and
# <dir>/<name>.pem (the server certificate, then the CA: a chain file for tls_cert_file)
# and <dir>/<name>.key, for the names localhost and 127.0.0.1, valid for two days.
# Prints the server certificate's SHA-256 fingerprint (hex, lower case, no colons).
set -euo pipefail
dir=$1
name=$2
mkdir -p "$dir"
cd "$dir"
if [[ ! -s ca.pem ]]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=crmd test CA" -keyout ca.key -out ca.pem \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    2>/dev/null
fi
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -subj "/CN=localhost" -keyout "$name.key" -out "$name.csr" 2>/dev/null
printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1" "extendedKeyUsage=serverAuth" \
  "basicConstraints=critical,CA:FALSE" >"$name.ext"
openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
  -extfile "$name.ext" -out "$name.crt" 2>/dev/null
cat "$name.crt" ca.pem >"$name.pem"
rm -f "$name.csr" "$name.ext" "$name.crt"
openssl x509 -in "$name.pem" -noout -fingerprint -sha256 | sed 's/.*=//; s/://g' | tr 'A-F' 'a-f'
