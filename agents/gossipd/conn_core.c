/* conn_core.c: peer connection state machine — frames, Noise handshake with peer-key verification, chunked encrypted payloads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "agents/gossipd/conn_core.h"
#include "mtserr.h"
#include "xmalloc.h"

/* Plaintext of one transport message: u8 flags | chunk. */
#define CHUNK_MORE 0x01
#define CHUNK_MAX (MTS_NOISE_MAXPLAIN - 1)

struct pending {
	uint8_t *data;
	size_t len;
	struct pending *next;
};

struct mts_conn {
	struct mts_noise_hs *hs;
	struct mts_noise_cipher tx, rx;
	int established;
	int failed;
	int verified;
	mts_conn_verify_fn verify;
	void *verify_ctx;
	size_t max_payload;
	uint8_t *hello;
	size_t hello_len;
	uint8_t *peer_hello;
	size_t peer_hello_len;
	uint8_t rs[32];
	int has_rs;
	struct mts_buf in;      /* received bytes not yet a whole frame */
	size_t in_off;          /* consumed prefix of in */
	struct mts_buf out;     /* bytes to write */
	struct mts_buf partial; /* payload being reassembled */
	struct pending *q, **qtail;
	uint64_t rx_bytes;
	char err[160];
};

static int
conn_fail(struct mts_conn *c, int rc, const char *what, const char *detail)
{
	snprintf(c->err, sizeof(c->err), "%s%s%s", what, detail ? ": " : "",
	    detail ? detail : "");
	c->failed = 1;
	return rc;
}

static void
put_frame(struct mts_conn *c, const uint8_t *msg, size_t len)
{
	mts_buf_put_u32be(&c->out, (uint32_t)len);
	mts_buf_put(&c->out, msg, len);
}

static int
setup_hs(struct mts_conn *c, const struct mts_conn_cfg *cfg)
{
	int rc;

	if (cfg->s_priv == NULL)
		return -MTS_ERR_INVAL;
	if ((rc = mts_noise_hs_new(&c->hs, cfg->protocol, cfg->role)) < 0)
		return rc;
	if ((rc = mts_noise_hs_set_s(c->hs, cfg->s_priv)) < 0)
		return rc;
	if (cfg->rs && (rc = mts_noise_hs_set_rs(c->hs, cfg->rs)) < 0)
		return rc;
	if (cfg->psk && (rc = mts_noise_hs_add_psk(c->hs, cfg->psk)) < 0)
		return rc;
	mts_noise_hs_set_rng(c->hs, cfg->rng, cfg->rng_ctx);
	return mts_noise_hs_start(c->hs, (const uint8_t *)MTS_PROLOGUE,
	    strlen(MTS_PROLOGUE));
}

/* Checks a newly learned remote static key once. */
static int
check_peer(struct mts_conn *c)
{
	const uint8_t *rs = mts_noise_hs_remote_static(c->hs);
	int rc;

	if (c->verified || rs == NULL)
		return 0;
	memcpy(c->rs, rs, 32);
	c->has_rs = 1;
	c->verified = 1;
	if (c->verify && (rc = c->verify(c->verify_ctx, rs)) < 0)
		return conn_fail(c, rc, "peer static key refused", NULL);
	return 0;
}

static int
finish_hs(struct mts_conn *c)
{
	if (!mts_noise_hs_done(c->hs))
		return 0;
	if (mts_noise_hs_split(c->hs, &c->tx, &c->rx) < 0)
		return conn_fail(c, -MTS_ERR_STATE, "split failed", NULL);
	mts_noise_hs_free(c->hs);
	c->hs = NULL;
	c->established = 1;
	return 0;
}

/* Writes our next handshake message; the hello rides in this side's last
 * message (with 1 or 2 messages left), which IK and XXpsk3 encrypt. */
static int
hs_write(struct mts_conn *c)
{
	uint8_t msg[MTS_NOISE_MAXMSG];
	size_t mlen;
	int last = mts_noise_hs_msgs_left(c->hs) <= 2;
	int rc;

	rc = mts_noise_hs_write(c->hs, last ? c->hello : NULL,
	    last ? c->hello_len : 0, msg, sizeof(msg), &mlen);
	if (rc < 0)
		return conn_fail(c, rc, "handshake write failed",
		    mts_noise_hs_error(c->hs));
	put_frame(c, msg, mlen);
	return finish_hs(c);
}

static int
hs_read(struct mts_conn *c, const uint8_t *frame, size_t len)
{
	uint8_t pl[MTS_NOISE_MAXMSG];
	size_t plen;
	int rc;

	rc = mts_noise_hs_read(c->hs, frame, len, pl, sizeof(pl), &plen);
	if (rc < 0)
		return conn_fail(c, rc, "handshake failed",
		    mts_noise_hs_error(c->hs));
	if ((rc = check_peer(c)) < 0)
		return rc;
	if (plen > 0) {
		free(c->peer_hello);
		c->peer_hello = xmemdup(pl, plen);
		c->peer_hello_len = plen;
	}
	if ((rc = finish_hs(c)) < 0)
		return rc;
	if (!c->established && mts_noise_hs_is_writer(c->hs))
		return hs_write(c);
	return 0;
}

static void
enqueue(struct mts_conn *c, uint8_t *data, size_t len)
{
	struct pending *p = xcalloc(1, sizeof(*p));

	p->data = data;
	p->len = len;
	*c->qtail = p;
	c->qtail = &p->next;
}

static int
transport_read(struct mts_conn *c, const uint8_t *frame, size_t len)
{
	uint8_t pt[MTS_NOISE_MAXMSG];
	size_t plen, total;
	uint8_t *data;
	int rc;

	rc = mts_noise_decrypt(&c->rx, NULL, 0, frame, len, pt, &plen);
	if (rc < 0)
		return conn_fail(c, rc, "frame failed to authenticate",
		    rc == -MTS_ERR_CRYPTO ? "tampered, replayed or reordered"
		                          : "nonce exhausted");
	if (plen < 1 || (pt[0] & ~CHUNK_MORE) != 0)
		return conn_fail(c, -MTS_ERR_INVAL, "bad chunk header", NULL);
	if (c->partial.len + plen - 1 > c->max_payload)
		return conn_fail(c, -MTS_ERR_TOOBIG, "payload over the limit",
		    NULL);
	mts_buf_put(&c->partial, pt + 1, plen - 1);
	c->rx_bytes += plen - 1;
	if (pt[0] & CHUNK_MORE)
		return 0;
	data = mts_buf_steal(&c->partial, &total);
	if (data == NULL)
		data = xmalloc(1);
	enqueue(c, data, total);
	return 0;
}

int
mts_conn_new(struct mts_conn **out, const struct mts_conn_cfg *cfg)
{
	struct mts_conn *c = xcalloc(1, sizeof(*c));
	int rc;

	*out = NULL;
	mts_buf_init(&c->in);
	mts_buf_init(&c->out);
	mts_buf_init(&c->partial);
	c->qtail = &c->q;
	c->verify = cfg->verify;
	c->verify_ctx = cfg->verify_ctx;
	c->max_payload =
	    cfg->max_payload ? cfg->max_payload : MTS_CONN_DEFAULT_MAXPAYLOAD;
	if (cfg->hello_len > CHUNK_MAX) {
		rc = -MTS_ERR_TOOBIG;
		goto out;
	}
	c->hello = xmalloc(cfg->hello_len + 1);
	if (cfg->hello_len)
		memcpy(c->hello, cfg->hello, cfg->hello_len);
	c->hello_len = cfg->hello_len;
	if ((rc = setup_hs(c, cfg)) < 0)
		goto out;
	if (cfg->role == MTS_NOISE_INITIATOR) {
		/* IK: the responder's key is known; check it like any other */
		if ((rc = check_peer(c)) < 0 || (rc = hs_write(c)) < 0)
			goto out;
	}
	*out = c;
	return 0;
out:
	mts_conn_free(c);
	return rc;
}

void
mts_conn_free(struct mts_conn *c)
{
	struct pending *p, *n;

	if (c == NULL)
		return;
	mts_noise_hs_free(c->hs);
	mts_noise_cipher_clear(&c->tx);
	mts_noise_cipher_clear(&c->rx);
	for (p = c->q; p; p = n) {
		n = p->next;
		free(p->data);
		free(p);
	}
	free(c->hello);
	free(c->peer_hello);
	mts_buf_free(&c->in);
	mts_buf_free(&c->out);
	mts_buf_free(&c->partial);
	free(c);
}

static int
handle_frame(struct mts_conn *c, const uint8_t *frame, size_t len)
{
	if (c->established)
		return transport_read(c, frame, len);
	if (mts_noise_hs_is_writer(c->hs))
		return conn_fail(c, -MTS_ERR_STATE,
		    "frame arrived while it was our turn", NULL);
	return hs_read(c, frame, len);
}

int
mts_conn_feed(struct mts_conn *c, const uint8_t *data, size_t len)
{
	uint32_t flen;
	int rc;

	if (c->failed)
		return -MTS_ERR_STATE;
	mts_buf_put(&c->in, data, len);
	while (c->in.len - c->in_off >= MTS_FRAME_HDR) {
		flen = mts_get_u32be(c->in.data + c->in_off);
		if (flen == 0 || flen > MTS_FRAME_MAX) {
			char n[16];

			snprintf(n, sizeof(n), "%u", flen);
			return conn_fail(c, -MTS_ERR_TOOBIG, "bad frame length",
			    n);
		}
		if (c->in.len - c->in_off - MTS_FRAME_HDR < flen)
			break;
		rc = handle_frame(c, c->in.data + c->in_off + MTS_FRAME_HDR,
		    flen);
		if (rc < 0)
			return rc;
		c->in_off += MTS_FRAME_HDR + flen;
	}
	if (c->in_off == c->in.len) {
		mts_buf_reset(&c->in);
		c->in_off = 0;
	} else if (c->in_off > (1u << 16)) {
		memmove(c->in.data, c->in.data + c->in_off,
		    c->in.len - c->in_off);
		c->in.len -= c->in_off;
		c->in_off = 0;
	}
	return 0;
}

int
mts_conn_next(struct mts_conn *c, uint8_t **msg, size_t *len)
{
	struct pending *p = c->q;

	if (p == NULL)
		return -MTS_ERR_NOTFOUND;
	c->q = p->next;
	if (c->q == NULL)
		c->qtail = &c->q;
	*msg = p->data;
	*len = p->len;
	free(p);
	return 0;
}

int
mts_conn_send(struct mts_conn *c, const uint8_t *payload, size_t len)
{
	uint8_t pt[MTS_NOISE_MAXPLAIN], ct[MTS_NOISE_MAXMSG];
	size_t off = 0, n, clen;
	int rc;

	if (!c->established || c->failed)
		return -MTS_ERR_STATE;
	if (len > c->max_payload)
		return -MTS_ERR_TOOBIG;
	do {
		n = len - off > CHUNK_MAX ? CHUNK_MAX : len - off;
		pt[0] = off + n < len ? CHUNK_MORE : 0;
		if (n)
			memcpy(pt + 1, payload + off, n);
		rc = mts_noise_encrypt(&c->tx, NULL, 0, pt, n + 1, ct, &clen);
		if (rc < 0)
			return conn_fail(c, rc, "encrypt failed", NULL);
		put_frame(c, ct, clen);
		off += n;
	} while (off < len);
	return 0;
}

struct mts_buf *
mts_conn_out(struct mts_conn *c)
{
	return &c->out;
}

void
mts_conn_consumed(struct mts_conn *c, size_t n)
{
	if (n >= c->out.len) {
		mts_buf_reset(&c->out);
		return;
	}
	memmove(c->out.data, c->out.data + n, c->out.len - n);
	c->out.len -= n;
}

int
mts_conn_established(const struct mts_conn *c)
{
	return c->established && !c->failed;
}

const uint8_t *
mts_conn_remote_static(const struct mts_conn *c)
{
	return c->has_rs ? c->rs : NULL;
}

const uint8_t *
mts_conn_peer_hello(const struct mts_conn *c, size_t *len)
{
	*len = c->peer_hello_len;
	return c->peer_hello;
}

const char *
mts_conn_error(const struct mts_conn *c)
{
	return c->err;
}

uint64_t
mts_conn_rx_bytes(const struct mts_conn *c)
{
	return c->rx_bytes;
}
