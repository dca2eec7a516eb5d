/* fuzz_input.h: the fuzzer's bytes read as a program, a byte at a time — shared by the API fuzzers that build well-formed requests from them. */
#ifndef MTS_FUZZ_INPUT_H
#define MTS_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

struct in {
	const uint8_t *p;
	size_t n;
};

/* The next byte (mod mod when mod is not 0); 0 once the input is spent. */
static inline unsigned
take(struct in *in, unsigned mod)
{
	unsigned v;

	if (in->n == 0)
		return 0;
	v = *in->p++;
	in->n--;
	return mod ? v % mod : v;
}

#endif
