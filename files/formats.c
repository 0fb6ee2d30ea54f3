/* The table of file kinds (formats.h). Adding a kind: its row here, its dt_file_kind, its reader
 * and writer (and their place in cast.c's open_source / write_single, and in the command line's
 * in-memory load and save). */
#include "files/formats.h"

#include <string.h>
#include <strings.h>

static const dt_file_format formats[] = {
    /* kind, name, endings, many_tensors, checkpoint, one_tensor_checkpoint, packs_float6 */
    {DT_FILE_NPY, "npy", {".npy", NULL}, 0, 0, 1, 0},
    {DT_FILE_PB, "pb", {".pb", NULL}, 0, 0, 0, 1},
    {DT_FILE_SAFETENSORS, "safetensors", {".safetensors", NULL}, 1, 1, 0, 1},
    {DT_FILE_SAFETENSORS_INDEX, "safetensors-index", {".safetensors.index.json", NULL}, 1, 1, 0,
     1},
    {DT_FILE_ONNX_MODEL, "onnx", {".onnx", NULL}, 1, 0, 0, 0},
    {DT_FILE_RAW, "raw", {".raw", ".bin", ".txt", NULL}, 0, 0, 0, 0},
};

const dt_file_format *dt_file_formats(size_t *n)
{
    *n = sizeof formats / sizeof formats[0];
    return formats;
}

const dt_file_format *dt_file_format_of(dt_file_kind kind)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].kind == kind)
            return &formats[i];
    return NULL;
}

const char *dt_file_kind_name(dt_file_kind kind)
{
    const dt_file_format *f = dt_file_format_of(kind);
    return f ? f->name : NULL;
}

static int has_ending(const char *path, const char *ending)
{
    size_t n = strlen(path), k = strlen(ending);
    return n >= k && strcasecmp(path + n - k, ending) == 0;
}

dt_file_kind dt_file_kind_of(const char *path)
{
    if (!path || strcmp(path, "-") == 0)
        return DT_FILE_RAW;
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        for (const char *const *e = formats[i].endings; *e; e++)
            if (has_ending(path, *e))
                return formats[i].kind;
    return DT_FILE_UNKNOWN;
}
