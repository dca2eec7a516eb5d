/* mtserr.h: the error codes library and core functions return (negated), and their names. */
#ifndef MTS_ERR_H
#define MTS_ERR_H

enum mts_err {
	MTS_OK = 0,
	MTS_ERR_INVAL = 1,    /* malformed input */
	MTS_ERR_NOTFOUND = 2, /* no such key / page / object */
	MTS_ERR_CONFLICT = 3, /* compare-and-set mismatch */
	MTS_ERR_TOOBIG = 4,   /* over a size limit */
	MTS_ERR_IO = 5,       /* storage or system failure */
	MTS_ERR_DENIED = 6,   /* caller not authorized */
	MTS_ERR_TIMEOUT = 7,  /* deadline passed */
	MTS_ERR_UNIMPL = 8,   /* unknown request type */
	MTS_ERR_VERSION = 9,  /* unsupported protocol version */
	MTS_ERR_CRYPTO = 10,  /* authentication / decryption failure */
	MTS_ERR_STATE = 11,   /* operation not valid in the current state */
	MTS_ERR_CANCELED =
	    12, /* the caller gave up (call canceled, client closed) */
};

const char *mts_strerror(int err);

#endif
