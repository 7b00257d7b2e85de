#ifndef BRAID_COPENSSL_H
#define BRAID_COPENSSL_H
#include <openssl/crypto.h>
#include <openssl/evp.h>
#endif
