/* embd-serve (`embd serve`): a binary front for an OpenAI-compatible embedding server.
 *
 * Clients speak the seed design's protocol (POST /v1/embed, /v1/embed/batch with
 * Accept: application/octet-stream -> an EMBD frame / batch) or OpenAI's /v1/embeddings;
 * the front asks its upstream for base64 JSON, decodes it with embd_openai_decode and
 * answers EMBD frames. Over the public C API only (include/embd*.h); libmicrohttpd serves,
 * libcurl calls upstream.
 *
 * Threads: one per client connection (libmicrohttpd's thread-per-connection mode), so a
 * slow, stalled or vanished client holds only its own thread while the others are
 * served; the upstream call blocks that thread alone. Upstream handles (libcurl easy
 * handles with their kept-alive connections) and decoders are pooled and reused. */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <microhttpd.h>

#include <embd.h>

#include "answer.h"
#include "request.h"

#define UPSTREAM_MAX_BODY ((size_t)1 << 30) /* an upstream answer above 1 GiB is a 502 */

/* ---- configuration ----------------------------------------------------------------------- */
typedef struct config {
  char *upstream_url;   /* URL + "/embeddings" */
  char *upstream_shown; /* the URL without user:password@, for logs */
  struct sockaddr_storage listen;
  socklen_t listen_len;
  char listen_text[96];
  const char *model;     /* --model: a missing model, or the seed's "default", becomes this */
  char *api_key_header;  /* "Authorization: Bearer <key>" from --api-key-env (never logged) */
  size_t max_body;
  long timeout_ms;
  unsigned concurrency;
  int access_log;
} config;

static config cfg;

/* ---- metrics -------------------------------------------------------------------------- */
static atomic_ulong m_status[600];
static atomic_ulong m_bytes_in, m_bytes_out, m_up_count, m_up_usec_sum, m_up_errors;
static const double m_bucket_le[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
#define NBUCKETS (sizeof m_bucket_le / sizeof m_bucket_le[0])
static atomic_ulong m_bucket[NBUCKETS];
static atomic_int inflight;
static atomic_int draining;

static void observe_upstream(double secs) {
  atomic_fetch_add(&m_up_count, 1);
  atomic_fetch_add(&m_up_usec_sum, (unsigned long)(secs * 1e6));
  for (size_t i = 0; i < NBUCKETS; i++)
    if (secs <= m_bucket_le[i]) atomic_fetch_add(&m_bucket[i], 1);
}

/* ---- pooled upstream handles and decoders ---------------------------------------------- */
typedef struct worker {
  CURL *curl;
  embd_openai_embeddings e;
  serve_buf up;   /* the upstream request body */
  serve_buf resp; /* the upstream answer */
  char ctype[128];
  struct worker *next;
} worker;

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static worker *pool;
static unsigned pool_n;

static void upstream_setup(worker *w);

static worker *worker_get(void) {
  pthread_mutex_lock(&pool_mu);
  worker *w = pool;
  if (w) {
    pool = w->next;
    pool_n--;
  }
  pthread_mutex_unlock(&pool_mu);
  if (w) return w;
  w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->curl = curl_easy_init();
  if (!w->curl) {
    free(w);
    return NULL;
  }
  embd_openai_init(&w->e);
  upstream_setup(w);
  return w;
}

static void worker_destroy(worker *w) {
  curl_easy_cleanup(w->curl);
  embd_openai_free(&w->e);
  serve_buf_free(&w->up);
  serve_buf_free(&w->resp);
  free(w);
}

static void worker_put(worker *w) {
  /* a huge answer's buffer is not kept for the next request */
  if (w->resp.cap > ((size_t)64 << 20)) serve_buf_free(&w->resp);
  if (w->up.cap > ((size_t)16 << 20)) serve_buf_free(&w->up);
  pthread_mutex_lock(&pool_mu);
  if (pool_n < cfg.concurrency) {
    w->next = pool;
    pool = w;
    pool_n++;
    w = NULL;
  }
  pthread_mutex_unlock(&pool_mu);
  if (w) worker_destroy(w);
}

/* ---- the upstream call ----------------------------------------------------------------- */
static size_t on_body(char *p, size_t size, size_t n, void *user) {
  worker *w = user;
  const size_t len = size * n;
  if (w->resp.len + len > UPSTREAM_MAX_BODY) return 0; /* CURLE_WRITE_ERROR: 502 */
  return serve_buf_put(&w->resp, p, len) ? 0 : len;
}

static size_t on_header(char *p, size_t size, size_t n, void *user) {
  worker *w = user;
  const size_t len = size * n;
  if (len > 13 && !strncasecmp(p, "Content-Type:", 13)) {
    size_t a = 13, b = len;
    while (a < b && (p[a] == ' ' || p[a] == '\t')) a++;
    while (b > a && (p[b - 1] == '\r' || p[b - 1] == '\n' || p[b - 1] == ' ')) b--;
    if (b - a < sizeof w->ctype) {
      memcpy(w->ctype, p + a, b - a);
      w->ctype[b - a] = '\0';
    }
  }
  return len;
}

/* Options that stay for the handle's life, set once: curl_easy_reset before each call
 * would also drop the 512 KiB receive buffer, which curl then allocates again (a fresh
 * mmap and its page faults every request). */
static void upstream_setup(worker *w) {
  CURL *c = w->curl;
  curl_easy_setopt(c, CURLOPT_URL, cfg.upstream_url);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, w);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, w);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, cfg.timeout_ms);
  curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  /* 512 KiB reads (the default is 16 KiB): an 800 KB base64 answer in a few recv calls */
  curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 512L * 1024);
}

static CURLcode upstream_post(worker *w, const char *auth_header, long *status, double *secs) {
  CURL *c = w->curl;
  w->resp.len = 0;
  w->ctype[0] = '\0';
  struct curl_slist *h = NULL, *t;
  /* "Expect:" turns off curl's 100-continue round trip for bodies above 1 MiB */
  const char *fixed[] = {"Content-Type: application/json", "Accept: application/json", "Expect:"};
  for (size_t i = 0; i < 3; i++) {
    t = curl_slist_append(h, fixed[i]);
    if (!t) goto oom;
    h = t;
  }
  if (auth_header) {
    t = curl_slist_append(h, auth_header);
    if (!t) goto oom;
    h = t;
  }
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, w->up.data);
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)w->up.len);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CURLcode cc = curl_easy_perform(c);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  *secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
  *status = 0;
  if (cc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
  curl_slist_free_all(h);
  return cc;
oom:
  curl_slist_free_all(h);
  return CURLE_OUT_OF_MEMORY;
}

/* ---- answers ----------------------------------------------------------------------------- */
typedef struct reqstate {
  int route;           /* serve_route, or -1 for a GET route */
  int counted;         /* in `inflight` */
  int too_big;
  serve_buf body;
} reqstate;

static void log_line(const char *method, const char *url, unsigned status, const char *what) {
  /* never headers or bodies: the Authorization header and keys stay out of every log */
  fprintf(stderr, "embd-serve: %s %s %u%s%s\n", method, url, status, what ? ": " : "", what ? what : "");
}

/* Answer buffers are pooled: an EMBD batch of 100 x 1536 is 614 KB, and a fresh malloc of
 * that size per request (mmap, page faults, munmap) cost more CPU than the encoding. The
 * holder goes to libmicrohttpd with the response and comes back here when it is sent. */
#define ANSWER_POOL 256
static pthread_mutex_t apool_mu = PTHREAD_MUTEX_INITIALIZER;
static serve_buf *apool[ANSWER_POOL];
static unsigned apool_n;

static void answer_take(serve_buf *b) {
  serve_buf *h = NULL;
  pthread_mutex_lock(&apool_mu);
  if (apool_n) h = apool[--apool_n];
  pthread_mutex_unlock(&apool_mu);
  if (h) {
    *b = *h;
    b->len = 0;
    free(h);
  }
}

static void answer_release(void *cls) {
  serve_buf *h = cls;
  if (h->cap <= ((size_t)64 << 20)) { /* a huge one is not kept */
    pthread_mutex_lock(&apool_mu);
    if (apool_n < ANSWER_POOL) {
      apool[apool_n++] = h;
      h = NULL;
    }
    pthread_mutex_unlock(&apool_mu);
  }
  if (h) {
    free(h->data);
    free(h);
  }
}

static enum MHD_Result send_buf(struct MHD_Connection *conn, unsigned status, serve_buf *b,
                                const char *ctype, const char *allow) {
  serve_buf *h = malloc(sizeof *h);
  struct MHD_Response *r =
      h ? MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->data, answer_release, h) : NULL;
  if (!r) {
    free(h);
    serve_buf_free(b);
    return MHD_NO;
  }
  *h = *b; /* libmicrohttpd owns it now: answer_release when sent */
  const size_t len = b->len;
  b->data = NULL;
  b->len = b->cap = 0;
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
  if (allow) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
  if (atomic_load(&draining)) MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
  const enum MHD_Result q = MHD_queue_response(conn, status, r);
  MHD_destroy_response(r);
  if (status < 600) atomic_fetch_add(&m_status[status], 1);
  atomic_fetch_add(&m_bytes_out, len);
  return q;
}

static enum MHD_Result send_error(struct MHD_Connection *conn, const char *method, const char *url,
                                  unsigned status, const char *message, const char *type, const char *code,
                                  const char *allow) {
  serve_buf b = {0};
  if (serve_error_json(&b, message, type, code)) {
    serve_buf_free(&b);
    return MHD_NO;
  }
  log_line(method, url, status, message);
  return send_buf(conn, status, &b, "application/json", allow);
}

static int accepts_binary(struct MHD_Connection *conn) {
  const char *a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
  if (!a) return 0;
  /* "application/octet-stream" in the list, unless it comes with q=0 */
  const char *p = strstr(a, "application/octet-stream");
  if (!p) return 0;
  const char *end = strchr(p, ',');
  const char *q = strstr(p, "q=0");
  if (q && (!end || q < end)) {
    const char *d = q + 3;
    if (*d == '.') d++;
    while (*d == '0') d++;
    if (!(*d >= '1' && *d <= '9')) return 0;
  }
  return 1;
}

static enum MHD_Result embed(struct MHD_Connection *conn, const char *method, const char *url, reqstate *st) {
  const serve_route route = (serve_route)st->route;
  serve_request req;
  serve_fault fault;
  if (serve_request_parse(&req, route, st->body.data ? st->body.data : "", st->body.len, &fault))
    return send_error(conn, method, url, 400, fault.message, "invalid_request_error", "invalid_request", NULL);
  const int binary = accepts_binary(conn);
  const int keep_encoding = route == SERVE_ROUTE_OPENAI && !binary;
  worker *w = worker_get();
  if (!w) return send_error(conn, method, url, 500, "out of memory", "server_error", "out_of_memory", NULL);
  size_t need = 0;
  w->up.len = 0;
  serve_request_upstream(&req, st->body.data, cfg.model, keep_encoding, NULL, 0, &need);
  if (serve_buf_reserve(&w->up, need + 1) ||
      serve_request_upstream(&req, st->body.data, cfg.model, keep_encoding, w->up.data, need, &w->up.len)) {
    worker_put(w);
    return send_error(conn, method, url, 500, "out of memory", "server_error", "out_of_memory", NULL);
  }
  /* the client's Authorization goes upstream, unless the front holds the key itself */
  char *client_auth = NULL;
  const char *auth = cfg.api_key_header;
  if (!auth) {
    const char *a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (a && !strpbrk(a, "\r\n")) {
      const size_t n = strlen(a) + sizeof "Authorization: ";
      client_auth = malloc(n);
      if (client_auth) snprintf(client_auth, n, "Authorization: %s", a);
      auth = client_auth;
    }
  }
  long status = 0;
  double secs = 0;
  const CURLcode cc = upstream_post(w, auth, &status, &secs);
  free(client_auth);
  enum MHD_Result q;
  char msg[300];
  if (cc != CURLE_OK) {
    atomic_fetch_add(&m_up_errors, 1);
    if (cc == CURLE_OPERATION_TIMEDOUT) {
      snprintf(msg, sizeof msg, "the upstream did not answer within %ld ms", cfg.timeout_ms);
      q = send_error(conn, method, url, 504, msg, "upstream_error", "upstream_timeout", NULL);
    } else {
      /* curl_easy_strerror: a fixed text per code, never the URL or a header */
      snprintf(msg, sizeof msg, "the upstream could not be reached: %s", curl_easy_strerror(cc));
      q = send_error(conn, method, url, 502, msg, "upstream_error",
                     cc == CURLE_COULDNT_CONNECT ? "upstream_refused" : "upstream_unreachable", NULL);
    }
    worker_put(w);
    return q;
  }
  observe_upstream(secs);
  if (status < 200 || status > 299) {
    /* the upstream's own error, status and body as they came */
    serve_buf b = {0};
    answer_take(&b);
    if (serve_buf_put(&b, w->resp.data ? w->resp.data : "", w->resp.len)) {
      worker_put(w);
      return MHD_NO;
    }
    char what[64];
    snprintf(what, sizeof what, "the upstream answered %ld", status);
    log_line(method, url, (unsigned)status, what);
    q = send_buf(conn, (unsigned)status, &b, w->ctype[0] ? w->ctype : "application/json", NULL);
    worker_put(w);
    return q;
  }
  if (keep_encoding) {
    serve_buf b = {0};
    answer_take(&b);
    if (serve_buf_put(&b, w->resp.data ? w->resp.data : "", w->resp.len)) {
      worker_put(w);
      return MHD_NO;
    }
    q = send_buf(conn, 200, &b, w->ctype[0] ? w->ctype : "application/json", NULL);
    if (cfg.access_log) log_line(method, url, 200, NULL);
    worker_put(w);
    return q;
  }
  embd_openai_options oo;
  memset(&oo, 0, sizeof oo);
  oo.expected_count = req.count;
  embd_error err;
  if (embd_openai_decode(&w->e, w->resp.data ? w->resp.data : "", w->resp.len, &oo, &err) != EMBD_OK) {
    snprintf(msg, sizeof msg, "the upstream's answer does not decode: %s", err.message);
    q = send_error(conn, method, url, 502, msg, "upstream_error", "upstream_bad_body", NULL);
    worker_put(w);
    return q;
  }
  serve_buf b = {0};
  answer_take(&b);
  int rc;
  if (binary)
    rc = serve_answer_binary(&req, &w->e, &b, &err);
  else if (route == SERVE_ROUTE_OPENAI)
    rc = -2; /* not reached: keep_encoding */
  else {
    rc = serve_answer_json(&req, &w->e, &b);
    if (rc) snprintf(err.message, sizeof err.message, "out of memory");
  }
  worker_put(w);
  if (rc) {
    serve_buf_free(&b);
    return send_error(conn, method, url, 400, err.message, "invalid_request_error", "dtype", NULL);
  }
  q = send_buf(conn, 200, &b, binary ? "application/octet-stream" : "application/json", NULL);
  if (cfg.access_log) log_line(method, url, 200, NULL);
  return q;
}

static enum MHD_Result metrics(struct MHD_Connection *conn) {
  serve_buf b = {0};
  char line[160];
  int n;
#define EMIT(...)                                                              \
  do {                                                                         \
    n = snprintf(line, sizeof line, __VA_ARGS__);                              \
    if (serve_buf_put(&b, line, (size_t)n)) goto oom;                          \
  } while (0)
  EMIT("# HELP embd_serve_requests_total Requests answered, by HTTP status.\n");
  EMIT("# TYPE embd_serve_requests_total counter\n");
  for (unsigned s = 100; s < 600; s++) {
    const unsigned long v = atomic_load(&m_status[s]);
    if (v) EMIT("embd_serve_requests_total{status=\"%u\"} %lu\n", s, v);
  }
  EMIT("# HELP embd_serve_request_bytes_total Request body bytes received.\n");
  EMIT("# TYPE embd_serve_request_bytes_total counter\n");
  EMIT("embd_serve_request_bytes_total %lu\n", atomic_load(&m_bytes_in));
  EMIT("# HELP embd_serve_response_bytes_total Response body bytes sent.\n");
  EMIT("# TYPE embd_serve_response_bytes_total counter\n");
  EMIT("embd_serve_response_bytes_total %lu\n", atomic_load(&m_bytes_out));
  EMIT("# HELP embd_serve_upstream_errors_total Upstream calls that failed (refused, reset, timed out).\n");
  EMIT("# TYPE embd_serve_upstream_errors_total counter\n");
  EMIT("embd_serve_upstream_errors_total %lu\n", atomic_load(&m_up_errors));
  EMIT("# HELP embd_serve_upstream_seconds Upstream call latency (calls that got an answer).\n");
  EMIT("# TYPE embd_serve_upstream_seconds histogram\n");
  for (size_t i = 0; i < NBUCKETS; i++)
    EMIT("embd_serve_upstream_seconds_bucket{le=\"%g\"} %lu\n", m_bucket_le[i], atomic_load(&m_bucket[i]));
  EMIT("embd_serve_upstream_seconds_bucket{le=\"+Inf\"} %lu\n", atomic_load(&m_up_count));
  EMIT("embd_serve_upstream_seconds_sum %.6f\n", (double)atomic_load(&m_up_usec_sum) * 1e-6);
  EMIT("embd_serve_upstream_seconds_count %lu\n", atomic_load(&m_up_count));
  EMIT("# HELP embd_serve_in_flight Requests being answered.\n");
  EMIT("# TYPE embd_serve_in_flight gauge\n");
  EMIT("embd_serve_in_flight %d\n", atomic_load(&inflight));
#undef EMIT
  return send_buf(conn, 200, &b, "text/plain; version=0.0.4", NULL);
oom:
  serve_buf_free(&b);
  return MHD_NO;
}

static int route_of(const char *url) {
  if (!strcmp(url, "/v1/embed")) return SERVE_ROUTE_EMBED;
  if (!strcmp(url, "/v1/embed/batch")) return SERVE_ROUTE_BATCH;
  if (!strcmp(url, "/v1/embeddings")) return SERVE_ROUTE_OPENAI;
  if (!strcmp(url, "/healthz")) return 10;
  if (!strcmp(url, "/metrics")) return 11;
  return -1;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **con_cls) {
  (void)cls;
  (void)version;
  reqstate *st = *con_cls;
  if (!st) {
    const int r = route_of(url);
    const int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
    if (r < 0)
      return send_error(conn, method, url, 404, "no such route (POST /v1/embed, /v1/embed/batch, /v1/embeddings; "
                        "GET /healthz, /metrics)", "invalid_request_error", "not_found", NULL);
    if (r >= 10) {
      if (!get) return send_error(conn, method, url, 405, "method not allowed (GET)", "invalid_request_error",
                                  "method_not_allowed", "GET, HEAD");
      if (r == 11) return metrics(conn);
      serve_buf b = {0};
      if (serve_buf_put(&b, "{\"status\":\"ok\"}\n", 16)) return MHD_NO;
      return send_buf(conn, 200, &b, "application/json", NULL);
    }
    if (strcmp(method, "POST"))
      return send_error(conn, method, url, 405, "method not allowed (POST)", "invalid_request_error",
                        "method_not_allowed", "POST");
    /* above --max-body: answered before the body is read (curl's Expect: 100-continue
     * gets the 413 instead of a 100) */
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
      char *end;
      errno = 0;
      const unsigned long long n = strtoull(cl, &end, 10);
      if (errno || end == cl || n > cfg.max_body) {
        char msg[128];
        snprintf(msg, sizeof msg, "the request body (%s bytes) is above the front's limit of %zu bytes", cl,
                 cfg.max_body);
        return send_error(conn, method, url, 413, msg, "invalid_request_error", "request_too_large", NULL);
      }
    }
    st = calloc(1, sizeof *st);
    if (!st) return MHD_NO;
    st->route = r;
    st->counted = 1;
    atomic_fetch_add(&inflight, 1);
    *con_cls = st;
    return MHD_YES;
  }
  if (*upload_size) {
    atomic_fetch_add(&m_bytes_in, *upload_size);
    if (!st->too_big) {
      if (st->body.len + *upload_size > cfg.max_body) {
        st->too_big = 1; /* chunked: the rest is read and dropped, then a 413 */
        serve_buf_free(&st->body);
      } else if (serve_buf_put(&st->body, upload, *upload_size)) {
        return MHD_NO;
      }
    }
    *upload_size = 0;
    return MHD_YES;
  }
  if (st->too_big) {
    char msg[96];
    snprintf(msg, sizeof msg, "the request body is above the front's limit of %zu bytes", cfg.max_body);
    return send_error(conn, method, url, 413, msg, "invalid_request_error", "request_too_large", NULL);
  }
  return embed(conn, method, url, st);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe) {
  (void)cls;
  (void)conn;
  (void)toe;
  reqstate *st = *con_cls;
  if (!st) return;
  if (st->counted) atomic_fetch_sub(&inflight, 1);
  serve_buf_free(&st->body);
  free(st);
  *con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap) {
  (void)cls;
  fputs("embd-serve: libmicrohttpd: ", stderr);
  vfprintf(stderr, fmt, ap);
}

/* ---- command line ---------------------------------------------------------------------- */
static void usage(FILE *f) {
  fputs("Usage: embd serve --upstream URL [--listen ADDR:PORT] [--model NAME] [--api-key-env VAR]\n"
        "                  [--max-body BYTES] [--timeout SECONDS] [--concurrency N] [--access-log]\n"
        "A binary front for an OpenAI-compatible embedding server (vLLM, TEI, Infinity, Ollama,\n"
        "llama.cpp, OpenAI): clients get EMBD frames, the upstream is asked for base64 JSON.\n"
        "\n"
        "  --upstream URL       the upstream's API base, e.g. http://127.0.0.1:8000/v1 (requests go\n"
        "                       to URL/embeddings)\n"
        "  --listen ADDR:PORT   where to listen (default 127.0.0.1:8080; [::1]:8080 for IPv6;\n"
        "                       port 0: any free port, printed at start)\n"
        "  --model NAME         the model asked for when a request names none, or names the seed\n"
        "                       client's placeholder \"default\"\n"
        "  --api-key-env VAR    send 'Authorization: Bearer $VAR' upstream (else the client's\n"
        "                       Authorization header is forwarded); keys never appear in logs\n"
        "  --max-body BYTES     request bodies above this are refused with 413 (default 16777216)\n"
        "  --timeout SECONDS    an upstream call longer than this is a 504 (default 60)\n"
        "  --concurrency N      client connections served at once, one thread each (default 64)\n"
        "  --access-log         a line on stderr for every request (default: errors only)\n"
        "\n"
        "Routes: POST /v1/embed {\"text\",\"model\"} -> one EMBD frame (Accept:\n"
        "application/octet-stream) or {\"embedding\": [...]}; POST /v1/embed/batch {\"texts\",\"model\"}\n"
        "-> an EMBD batch or {\"embeddings\": [[...]]}; POST /v1/embeddings (OpenAI's request) -> an\n"
        "EMBD batch in input order with Accept: application/octet-stream, else the upstream's JSON.\n"
        "A \"dtype\" field (f16, bf16, int8, ...) asks for version-2 frames of that dtype.\n"
        "GET /healthz, GET /metrics (Prometheus). Errors: OpenAI-shaped JSON; 400 malformed request\n"
        "(the byte named), 404, 405, 413, the upstream's 4xx/5xx as they came, 502 upstream\n"
        "unreachable or its body undecodable, 504 upstream timeout.\n"
        "SIGTERM/SIGINT: stop accepting, finish what is in flight, exit 0. Stateless: run copies\n"
        "behind any load balancer.\n",
        f);
}

static int parse_listen(const char *s) {
  const char *colon = strrchr(s, ':');
  if (!colon) return -1;
  char host[64];
  const char *h = s;
  size_t hl = (size_t)(colon - s);
  if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']') {
    h = s + 1;
    hl -= 2;
  }
  if (hl == 0 || hl >= sizeof host) return -1;
  memcpy(host, h, hl);
  host[hl] = '\0';
  char *end;
  errno = 0;
  const unsigned long port = strtoul(colon + 1, &end, 10);
  if (errno || *end || end == colon + 1 || port > 65535) return -1;
  memset(&cfg.listen, 0, sizeof cfg.listen);
  struct sockaddr_in *a4 = (struct sockaddr_in *)&cfg.listen;
  struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&cfg.listen;
  if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons((uint16_t)port);
    cfg.listen_len = sizeof *a4;
  } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons((uint16_t)port);
    cfg.listen_len = sizeof *a6;
  } else {
    return -1;
  }
  snprintf(cfg.listen_text, sizeof cfg.listen_text, "%s%s%s", cfg.listen.ss_family == AF_INET6 ? "[" : "",
           host, cfg.listen.ss_family == AF_INET6 ? "]" : "");
  return 0;
}

static char *redact(const char *url) {
  /* scheme://user:password@host/... -> scheme://host/... */
  char *out = strdup(url);
  if (!out) return NULL;
  char *s = strstr(out, "://");
  if (!s) return out;
  s += 3;
  char *slash = strchr(s, '/');
  char *at = strchr(s, '@');
  if (at && (!slash || at < slash)) memmove(s, at + 1, strlen(at + 1) + 1);
  return out;
}

static int num_arg(const char *name, const char *v, unsigned long long lo, unsigned long long hi,
                   unsigned long long *out) {
  char *end;
  errno = 0;
  const unsigned long long n = v ? strtoull(v, &end, 10) : 0;
  if (!v || errno || *end || end == v || v[0] == '-' || n < lo || n > hi) {
    fprintf(stderr, "embd serve: %s needs a number in %llu..%llu\n", name, lo, hi);
    return -1;
  }
  *out = n;
  return 0;
}

int main(int argc, char **argv) {
  const char *upstream = NULL, *listen = "127.0.0.1:8080", *key_env = NULL;
  unsigned long long max_body = 16u << 20, timeout = 60, conc = 64;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--upstream") && v) {
      upstream = v, i++;
    } else if (!strcmp(a, "--listen") && v) {
      listen = v, i++;
    } else if (!strcmp(a, "--model") && v) {
      cfg.model = v, i++;
    } else if (!strcmp(a, "--api-key-env") && v) {
      key_env = v, i++;
    } else if (!strcmp(a, "--max-body")) {
      if (num_arg(a, v, 1, (unsigned long long)SIZE_MAX / 2, &max_body)) return 2;
      i++;
    } else if (!strcmp(a, "--timeout")) {
      if (num_arg(a, v, 1, 86400, &timeout)) return 2;
      i++;
    } else if (!strcmp(a, "--concurrency")) {
      if (num_arg(a, v, 1, 4096, &conc)) return 2;
      i++;
    } else if (!strcmp(a, "--access-log")) {
      cfg.access_log = 1;
    } else {
      fprintf(stderr, "embd serve: unknown option or missing value: '%s'\nTry 'embd serve --help'.\n", a);
      return 2;
    }
  }
  if (!upstream || (strncmp(upstream, "http://", 7) && strncmp(upstream, "https://", 8))) {
    fprintf(stderr, "embd serve: --upstream http(s)://HOST:PORT/v1 is required\nTry 'embd serve --help'.\n");
    return 2;
  }
  if (parse_listen(listen)) {
    fprintf(stderr, "embd serve: --listen wants ADDR:PORT with a numeric IPv4 or [IPv6] address, not '%s'\n",
            listen);
    return 2;
  }
  size_t ul = strlen(upstream);
  while (ul && upstream[ul - 1] == '/') ul--;
  cfg.upstream_url = malloc(ul + sizeof "/embeddings");
  if (!cfg.upstream_url) return 4;
  memcpy(cfg.upstream_url, upstream, ul);
  memcpy(cfg.upstream_url + ul, "/embeddings", sizeof "/embeddings");
  cfg.upstream_shown = redact(cfg.upstream_url);
  if (key_env) {
    const char *k = getenv(key_env);
    if (!k || !*k || strpbrk(k, "\r\n")) {
      fprintf(stderr, "embd serve: --api-key-env %s: the variable is unset, empty or holds a line break\n",
              key_env);
      return 2;
    }
    const size_t n = strlen(k) + sizeof "Authorization: Bearer ";
    cfg.api_key_header = malloc(n);
    if (!cfg.api_key_header) return 4;
    snprintf(cfg.api_key_header, n, "Authorization: Bearer %s", k);
  }
  cfg.max_body = (size_t)max_body;
  cfg.timeout_ms = (long)timeout * 1000;
  cfg.concurrency = (unsigned)conc;
  if (getenv("EMBD_SERVE_TIMEOUT_MS")) /* the tests' sub-second timeouts */
    cfg.timeout_ms = atol(getenv("EMBD_SERVE_TIMEOUT_MS"));

  /* the kernels' one-time dispatch here, not in the first request's thread; an invalid
   * EMBD_ISA is refused at start */
  const char *isa = getenv("EMBD_ISA");
  if (isa && *isa && embd_isa_check(isa) != EMBD_OK) {
    fprintf(stderr, "embd serve: EMBD_ISA=%s: %s\n", isa, embd_strerror(embd_isa_check(isa)));
    return 2;
  }
  (void)embd_crc32(0, "", 0);

  if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
    fprintf(stderr, "embd serve: curl_global_init failed\n");
    return 4;
  }
  signal(SIGPIPE, SIG_IGN);
  /* SIGTERM/SIGINT are taken by sigwait in this thread: blocked before any thread starts,
   * so that every thread inherits the mask */
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);

  struct MHD_Daemon *d = MHD_start_daemon(
      MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC |
          MHD_USE_ERROR_LOG | (cfg.listen.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
      0, NULL, NULL, handler, NULL, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
      MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&cfg.listen,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)conc, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
      MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
      MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024, MHD_OPTION_END);
  if (!d) {
    fprintf(stderr, "embd serve: cannot listen on %s (%s)\n", listen, strerror(errno));
    return 3;
  }
  const union MHD_DaemonInfo *pi = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  const unsigned port = pi ? pi->port : 0;
  fprintf(stderr, "embd-serve: listening on http://%s:%u, upstream %s (embd %s)\n", cfg.listen_text, port,
          cfg.upstream_shown ? cfg.upstream_shown : "(url)", embd_version());
  int sig = 0;
  while (sigwait(&stop, &sig) != 0) {
  }
  /* stop accepting; what is in flight finishes (an upstream call at most --timeout) */
  atomic_store(&draining, 1);
  const MHD_socket ls = MHD_quiesce_daemon(d);
  if (ls != MHD_INVALID_SOCKET) close(ls);
  fprintf(stderr, "embd-serve: %s: draining %d request(s) in flight\n", sig == SIGINT ? "SIGINT" : "SIGTERM",
          atomic_load(&inflight));
  const long limit_ms = cfg.timeout_ms + 5000;
  for (long waited = 0; atomic_load(&inflight) > 0 && waited < limit_ms; waited += 10) {
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  const int left = atomic_load(&inflight);
  MHD_stop_daemon(d);
  while (pool) {
    worker *w = pool;
    pool = w->next;
    worker_destroy(w);
  }
  while (apool_n) {
    serve_buf *h = apool[--apool_n];
    free(h->data);
    free(h);
  }
  curl_global_cleanup();
  free(cfg.upstream_url);
  free(cfg.upstream_shown);
  free(cfg.api_key_header);
  fprintf(stderr, "embd-serve: stopped%s\n", left ? " (requests still in flight were cut)" : "");
  return left ? 1 : 0;
}
