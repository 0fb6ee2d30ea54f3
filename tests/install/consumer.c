/* A program that links dtcast the way users do: through pkg-config or CMake. */
#include <dtcast.h>
#include <stdio.h>

int main(void)
{
    float x = 1.5f;
    unsigned char f8 = 0;
    if (dtcast_convert(&f8, DTCAST_FLOAT8E4M3FN, &x, DTCAST_FLOAT32, 1, NULL, NULL) != DTCAST_OK)
        return 1;
    printf("0x%02x\n", f8);
    return f8 == 0x3C ? 0 : 1;
}
