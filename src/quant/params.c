/* dtcast_quant_params: defaults, reading a caller's struct, names, recipes. */
#include "quant.h"

#include <stdio.h>
#include <string.h>

/* The 1.0 struct ends with threads. */
#define QP_SIZE_1_0 (offsetof(dtcast_quant_params, threads) + sizeof(unsigned))

static void qp_defaults(dtcast_quant_params *p)
{
    memset(p, 0, sizeof *p);
    p->size = sizeof *p;
    p->scheme = DTCAST_SCHEME_MX;
    p->variant = DTCAST_VARIANT_DEFAULT;
    p->element = DTCAST_UNDEFINED;
    p->scale_type = DTCAST_UNDEFINED;
    p->scale_mode = DTCAST_SCALE_DEFAULT;
    p->round = DTCAST_ROUND_DEFAULT;
    p->axis = -1;
}

void dtcast_quant_params_init_sized(dtcast_quant_params *p, size_t size)
{
    if (!p || size < QP_SIZE_1_0)
        return;
    dtcast_quant_params d;
    qp_defaults(&d);
    dt_sized_init(p, size, &d, sizeof d);
}

dtcast_status dt_quant_params_read(const dtcast_quant_params *p, dtcast_quant_params *out,
                                   dtcast_error *error)
{
    qp_defaults(out);
    if (!p)
        return DTCAST_OK;
    return dt_sized_read(out, p, sizeof *out, QP_SIZE_1_0, "quantization parameters",
                         "dtcast_quant_params_init", error);
}

/* ---- names ------------------------------------------------------------------------------------ */

typedef struct name_value {
    const char *name;
    int value;
} name_value;

static const name_value schemes[] = {
    {"mx", DTCAST_SCHEME_MX},
    {"nvfp4", DTCAST_SCHEME_NVFP4},
    {"fp8-block", DTCAST_SCHEME_FP8_BLOCK},
    {"absmax", DTCAST_SCHEME_ABSMAX},
    {NULL, 0},
};
static const name_value variants[] = {
    {"default", DTCAST_VARIANT_DEFAULT}, {"ocp", DTCAST_VARIANT_OCP},
    {"modelopt", DTCAST_VARIANT_MODELOPT}, {"torchao", DTCAST_VARIANT_TORCHAO},
    {"ct", DTCAST_VARIANT_CT}, {"hf", DTCAST_VARIANT_HF},
    {"deepseek-act", DTCAST_VARIANT_DEEPSEEK_ACT}, {NULL, 0},
};
static const name_value modes[] = {
    {"default", DTCAST_SCALE_DEFAULT}, {"floor", DTCAST_SCALE_FLOOR}, {"ceil", DTCAST_SCALE_CEIL},
    {"even", DTCAST_SCALE_EVEN},       {"rceil", DTCAST_SCALE_RCEIL}, {"log2", DTCAST_SCALE_LOG2},
    {NULL, 0},
};

static const char *name_of(const name_value *t, int v)
{
    for (; t->name; t++)
        if (t->value == v)
            return t->name;
    return NULL;
}

static bool value_of(const name_value *t, const char *name, int *v)
{
    if (!name)
        return false;
    for (; t->name; t++)
        if (strcmp(t->name, name) == 0) {
            *v = t->value;
            return true;
        }
    return false;
}

static dtcast_status unknown(dtcast_error *error, const char *what, const char *name,
                             const name_value *t)
{
    char list[160] = "";
    size_t len = 0;
    for (; t->name && len + strlen(t->name) + 3 < sizeof list; t++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", t->name);
    return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "unknown %s \"%s\" (known: %s)",
                   what, name ? name : "(null)", list);
}

const char *dtcast_scheme_name(dtcast_scheme scheme)
{
    return name_of(schemes, (int)scheme);
}

dtcast_status dtcast_scheme_from_name(const char *name, dtcast_scheme *scheme, dtcast_error *error)
{
    int v;
    if (!scheme)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "scheme is NULL");
    if (!value_of(schemes, name, &v))
        return unknown(error, "scheme", name, schemes);
    *scheme = (dtcast_scheme)v;
    return DTCAST_OK;
}

const char *dtcast_variant_name(dtcast_variant variant)
{
    return name_of(variants, (int)variant);
}

dtcast_status dtcast_variant_from_name(const char *name, dtcast_variant *variant,
                                       dtcast_error *error)
{
    int v;
    if (!variant)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "variant is NULL");
    if (!value_of(variants, name, &v))
        return unknown(error, "variant", name, variants);
    *variant = (dtcast_variant)v;
    return DTCAST_OK;
}

const char *dtcast_scale_mode_name(dtcast_scale_mode mode)
{
    return name_of(modes, (int)mode);
}

dtcast_status dtcast_scale_mode_from_name(const char *name, dtcast_scale_mode *mode,
                                          dtcast_error *error)
{
    int v;
    if (!mode)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "scale mode is NULL");
    if (!value_of(modes, name, &v))
        return unknown(error, "scale mode", name, modes);
    *mode = (dtcast_scale_mode)v;
    return DTCAST_OK;
}

/* ---- recipes ------------------------------------------------------------------------------------ */

typedef struct recipe {
    const char *name;
    dtcast_scheme scheme;
    dtcast_type element;
    int64_t block;      /* 0: the scheme's */
    int64_t block_rows; /* FP8_BLOCK */
    bool per_tensor;
} recipe;

static const recipe recipes[] = {
    {"mxfp8", DTCAST_SCHEME_MX, DTCAST_FLOAT8E4M3FN, 32, 0, false},
    {"mxfp8-e5m2", DTCAST_SCHEME_MX, DTCAST_FLOAT8E5M2, 32, 0, false},
    {"mxfp6-e2m3", DTCAST_SCHEME_MX, DTCAST_FLOAT6E2M3FN, 32, 0, false},
    {"mxfp6-e3m2", DTCAST_SCHEME_MX, DTCAST_FLOAT6E3M2FN, 32, 0, false},
    {"mxfp4", DTCAST_SCHEME_MX, DTCAST_FLOAT4E2M1, 32, 0, false},
    {"mxint8", DTCAST_SCHEME_MX, DTCAST_INT8, 32, 0, false},
    {"nvfp4", DTCAST_SCHEME_NVFP4, DTCAST_FLOAT4E2M1, 16, 0, false},
    {"fp8-block", DTCAST_SCHEME_FP8_BLOCK, DTCAST_FLOAT8E4M3FN, 128, 128, false},
    {"fp8-channel", DTCAST_SCHEME_ABSMAX, DTCAST_FLOAT8E4M3FN, 0, 0, false},
    {"fp8-tensor", DTCAST_SCHEME_ABSMAX, DTCAST_FLOAT8E4M3FN, 0, 0, true},
    {"int8-channel", DTCAST_SCHEME_ABSMAX, DTCAST_INT8, 0, 0, false},
    {"int8-tensor", DTCAST_SCHEME_ABSMAX, DTCAST_INT8, 0, 0, true},
    {"int4-group", DTCAST_SCHEME_ABSMAX, DTCAST_INT4, 128, 0, false},
    {"fp4-group", DTCAST_SCHEME_ABSMAX, DTCAST_FLOAT4E2M1, 16, 0, false},
    {"mx", DTCAST_SCHEME_MX, DTCAST_UNDEFINED, 0, 0, false},
    {"nvfp4", DTCAST_SCHEME_NVFP4, DTCAST_UNDEFINED, 0, 0, false},
    {"fp8-block", DTCAST_SCHEME_FP8_BLOCK, DTCAST_UNDEFINED, 0, 0, false},
    {"absmax", DTCAST_SCHEME_ABSMAX, DTCAST_UNDEFINED, 0, 0, false},
    {NULL, 0, 0, 0, 0, false},
};

dtcast_status dtcast_quant_params_from_recipe(dtcast_quant_params *p, const char *name,
                                              dtcast_error *error)
{
    if (!p)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX, "params is NULL");
    if (p->size < QP_SIZE_1_0)
        return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                       "quantization parameters not initialised: call dtcast_quant_params_init "
                       "(size is %zu)",
                       p->size);
    for (const recipe *r = recipes; name && r->name; r++) {
        if (strcmp(r->name, name) != 0)
            continue;
        p->scheme = r->scheme;
        p->element = r->element;
        p->block = r->block;
        p->block_rows = r->block_rows;
        p->per_tensor = r->per_tensor;
        return DTCAST_OK;
    }
    char list[400] = "";
    size_t len = 0;
    for (const recipe *r = recipes; r->name && r < recipes + 14; r++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", r->name);
    return dt_fail(error, DTCAST_ERR_INVALID_ARGUMENT, DT_NO_INDEX,
                   "unknown quantization recipe \"%s\" (known: %s, and the scheme names mx, "
                   "nvfp4, fp8-block, absmax)",
                   name ? name : "(null)", list);
}
