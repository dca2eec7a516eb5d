/* sp_wire.h: the SP-over-IPC wire that ipc_server.c and ipc_client.c share with nng — greetings, message frames, protocol numbers. */
#ifndef MTS_SP_WIRE_H
#define MTS_SP_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "buf.h"

/*
 * Each side first sends a greeting: 0x00 'S' 'P' 0x00, its protocol number
 * (u16 big endian), 0x00 0x00. Every message then travels as SP_MSG, its
 * length (u64 big endian) and its bytes; a REQ/REP message starts with the
 * backtrace, 32-bit words of which the last (the request id) has the high
 * bit set.
 */
#define SP_GREETING_LEN 8
#define SP_FRAME_HEAD 9 /* type byte + u64 length */
#define SP_MSG 0x01
#define SP_PROTO_REQ 0x30
#define SP_PROTO_REP 0x31
#define SP_ID_END 0x80000000u /* marks the last word of a backtrace */

static inline void
sp_greeting(uint8_t out[SP_GREETING_LEN], uint16_t proto)
{
	memcpy(out, "\0SP\0", 4);
	mts_put_u16be(out + 4, proto);
	out[6] = out[7] = 0;
}

static inline bool
sp_greeting_is(const uint8_t p[SP_GREETING_LEN], uint16_t proto)
{
	return memcmp(p, "\0SP\0", 4) == 0 && mts_get_u16be(p + 4) == proto &&
	    p[6] == 0 && p[7] == 0;
}

#endif
