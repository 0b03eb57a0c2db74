// The one translation unit holding stb_image's and stb_image_resize's code (Debian's
// libstb-dev). Compiled without warnings (CMake): the headers are third-party C.
// Only the formats an image folder reads are built: less code that sees untrusted files.
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_BMP
#define STBI_NO_STDIO
#define STBI_MAX_DIMENSIONS (1 << 14)
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

#define STB_IMAGE_RESIZE_IMPLEMENTATION
#include <stb/stb_image_resize.h>
