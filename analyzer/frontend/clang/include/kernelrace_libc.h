/* kernelrace's C library for host code (<stdio.h>, <stdlib.h>, <string.h> and their <c...> forms):
   declarations only, so that host code and the headers it includes parse without the system's
   C library. Kernels never reach these functions' bodies: a call from a kernel is a function of its
   arguments, as any declared function. */
#pragma once
#ifdef __CUDACC__
#define __KR_LIBC extern "C" __host__
#define __KR_LIBC_HD extern "C" __host__ __device__   /* CUDA's memcpy and memset run on the device too */
#else
#define __KR_LIBC extern "C"
#define __KR_LIBC_HD extern "C"
#endif
typedef unsigned long size_t;
typedef struct _IO_FILE FILE;   /* glibc's name: the same type where both are included */
__KR_LIBC FILE *__kr_stdin(void);
__KR_LIBC FILE *__kr_stdout(void);
__KR_LIBC FILE *__kr_stderr(void);
#define stdin (__kr_stdin())
#define stdout (__kr_stdout())
#define stderr (__kr_stderr())
#define EOF (-1)
#define BUFSIZ 8192
#define FILENAME_MAX 4096
#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define RAND_MAX 2147483647
__KR_LIBC FILE *fopen(const char *, const char *);
__KR_LIBC int fclose(FILE *);
__KR_LIBC size_t fread(void *, size_t, size_t, FILE *);
__KR_LIBC size_t fwrite(const void *, size_t, size_t, FILE *);
__KR_LIBC int fprintf(FILE *, const char *, ...);
__KR_LIBC int sprintf(char *, const char *, ...);
__KR_LIBC int snprintf(char *, size_t, const char *, ...);
__KR_LIBC int fscanf(FILE *, const char *, ...);
__KR_LIBC int scanf(const char *, ...);
__KR_LIBC int sscanf(const char *, const char *, ...);
__KR_LIBC char *fgets(char *, int, FILE *);
__KR_LIBC int fgetc(FILE *);
__KR_LIBC int getc(FILE *);
__KR_LIBC int fputs(const char *, FILE *);
__KR_LIBC int fputc(int, FILE *);
__KR_LIBC int puts(const char *);
__KR_LIBC int putchar(int);
__KR_LIBC int getchar(void);
__KR_LIBC int fflush(FILE *);
__KR_LIBC int fseek(FILE *, long, int);
__KR_LIBC long ftell(FILE *);
__KR_LIBC void rewind(FILE *);
__KR_LIBC int feof(FILE *);
__KR_LIBC void perror(const char *);
__KR_LIBC int remove(const char *);
__KR_LIBC void *malloc(size_t);
__KR_LIBC void *calloc(size_t, size_t);
__KR_LIBC void *realloc(void *, size_t);
__KR_LIBC void free(void *);
__KR_LIBC void exit(int);
__KR_LIBC void abort(void);
__KR_LIBC int atoi(const char *);
__KR_LIBC long atol(const char *);
__KR_LIBC double atof(const char *);
__KR_LIBC long strtol(const char *, char **, int);
__KR_LIBC unsigned long strtoul(const char *, char **, int);
__KR_LIBC long long strtoll(const char *, char **, int);
__KR_LIBC unsigned long long strtoull(const char *, char **, int);
__KR_LIBC double strtod(const char *, char **);
__KR_LIBC float strtof(const char *, char **);
__KR_LIBC int rand(void);
__KR_LIBC void srand(unsigned);
__KR_LIBC long labs(long);
__KR_LIBC void qsort(void *, size_t, size_t, int (*)(const void *, const void *));
__KR_LIBC char *getenv(const char *);
__KR_LIBC int system(const char *);
__KR_LIBC int posix_memalign(void **, size_t, size_t);
__KR_LIBC void *aligned_alloc(size_t, size_t);
__KR_LIBC_HD void *memcpy(void *, const void *, size_t);
__KR_LIBC_HD void *memset(void *, int, size_t);
__KR_LIBC void *memmove(void *, const void *, size_t);
__KR_LIBC int memcmp(const void *, const void *, size_t);
__KR_LIBC size_t strlen(const char *);
__KR_LIBC char *strcpy(char *, const char *);
__KR_LIBC char *strncpy(char *, const char *, size_t);
__KR_LIBC int strcmp(const char *, const char *);
__KR_LIBC int strncmp(const char *, const char *, size_t);
__KR_LIBC int strcasecmp(const char *, const char *);
__KR_LIBC char *strcat(char *, const char *);
__KR_LIBC char *strncat(char *, const char *, size_t);
__KR_LIBC char *strchr(const char *, int);
__KR_LIBC char *strrchr(const char *, int);
__KR_LIBC char *strstr(const char *, const char *);
__KR_LIBC char *strdup(const char *);
__KR_LIBC char *strtok(char *, const char *);
__KR_LIBC char *strerror(int);
namespace std {
using ::FILE; using ::size_t; using ::fopen; using ::fclose; using ::fread; using ::fwrite; using ::fprintf;
using ::sprintf; using ::snprintf; using ::fscanf; using ::scanf; using ::sscanf; using ::fgets; using ::fgetc;
using ::getc; using ::fputs; using ::fputc; using ::puts; using ::putchar; using ::getchar; using ::fflush;
using ::fseek; using ::ftell; using ::rewind; using ::feof; using ::perror; using ::remove; using ::malloc;
using ::calloc; using ::realloc; using ::free; using ::exit; using ::abort; using ::atoi; using ::atol; using ::atof;
using ::strtol; using ::strtoul; using ::strtoll; using ::strtoull; using ::strtod; using ::strtof; using ::rand;
using ::srand; using ::labs; using ::qsort; using ::getenv; using ::system; using ::aligned_alloc; using ::memcpy;
using ::memset; using ::memmove; using ::memcmp; using ::strlen; using ::strcpy; using ::strncpy; using ::strcmp;
using ::strncmp; using ::strcat; using ::strncat; using ::strchr; using ::strrchr; using ::strstr; using ::strtok;
using ::strerror;
}
#undef __KR_LIBC
