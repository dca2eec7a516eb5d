/* pbjson.c: any protobuf-c message as a JSON object, field by field from its descriptor (for `service inspect`): names as in the .proto, 64-bit numbers as JSON integers, bytes as hex. */
#include <string.h>

#include "hash.h"
#include "mtsctl.h"
#include "xmalloc.h"

static json_t *
value(const ProtobufCFieldDescriptor *f, const void *p)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		return json_integer(*(const int32_t *)p);
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return json_integer(*(const uint32_t *)p);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		return json_integer(*(const int64_t *)p);
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return json_integer((json_int_t) * (const uint64_t *)p);
	case PROTOBUF_C_TYPE_FLOAT:
		return json_real(*(const float *)p);
	case PROTOBUF_C_TYPE_DOUBLE:
		return json_real(*(const double *)p);
	case PROTOBUF_C_TYPE_BOOL:
		return json_boolean(*(const protobuf_c_boolean *)p);
	case PROTOBUF_C_TYPE_ENUM:
		return json_integer(*(const int *)p);
	case PROTOBUF_C_TYPE_STRING:
		return json_string(*(char *const *)p ? *(char *const *)p : "");
	case PROTOBUF_C_TYPE_BYTES: {
		const ProtobufCBinaryData *b = p;
		char *hex = xmalloc(2 * b->len + 1);
		json_t *j;

		mts_hex(hex, b->data, b->len);
		j = json_string(hex);
		free(hex);
		return j;
	}
	case PROTOBUF_C_TYPE_MESSAGE:
		return *(ProtobufCMessage *const *)p
		    ? mtsctl_pb_json(*(ProtobufCMessage *const *)p)
		    : json_null();
	}
	return json_null();
}

size_t
mtsctl_pb_value_size(const ProtobufCFieldDescriptor *f)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	default:
		return 4;
	}
}

json_t *
mtsctl_pb_json(const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	json_t *o = json_object();
	unsigned i;

	for (i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *base = (const char *)m + f->offset;

		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)((const char *)m +
			           f->quantifier_offset),
			       k;
			const char *arr = *(char *const *)base;
			json_t *a = json_array();

			for (k = 0; k < n; k++)
				json_array_append_new(a,
				    value(f,
				        arr + k * mtsctl_pb_value_size(f)));
			json_object_set_new(o, f->name, a);
		} else
			json_object_set_new(o, f->name, value(f, base));
	}
	return o;
}
