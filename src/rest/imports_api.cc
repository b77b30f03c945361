// Contact imports: POST /imports (the CSV file as the body, text/csv, options as query
// parameters; or a multipart/form-data form with the file as its part "file") answers 202 and a
// Location at once; the import runs in the background (src/jobs/import_runner.h). GET /imports/{id}
// its progress, GET /imports/{id}/errors the rows not applied (CSV), DELETE /imports/{id} cancels.
// Any enabled API key.
#include <cstring>

#include "src/core/multipart.h"
#include "src/crm/imports.h"
#include "src/crm/services.h"
#include "src/rest/helpers.h"
#include "src/rest/rest_api.h"

namespace crmd::rest {
namespace {

governance::Actor ImportKeyActor(const RestContext& ctx) {
  return {.kind = "api_key",
          .subject = ctx.key ? std::to_string(ctx.key->id) : "",
          .client_id = "",
          .request_id = ctx.req.request_id};
}

bool IsCsvContentType(std::string_view ct) {
  std::string_view media = ct.substr(0, ct.find(';'));
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  std::string lower(media);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return lower == "text/csv" || lower == "application/csv";
}

// The upload's bytes as the import reads them: the streamed body, or a file held whole (a
// multipart form's part). A streamed body that ends before its length is a failed read.
crm::ByteSource UploadSource(const RestContext& ctx, std::string_view file, size_t& pos) {
  if (const auto& body = ctx.req.body_stream) {
    return [body](char* buf, size_t n) {
      size_t k = body->read(buf, n);
      return k == http::BodyStream::kFailed ? crm::kByteSourceFailed : k;
    };
  }
  return [file, &pos](char* buf, size_t n) {
    size_t k = std::min(n, file.size() - pos);
    std::memcpy(buf, file.data() + pos, k);
    pos += k;
    return k;
  };
}

// A refused file or option: 422 naming the reason, as a field error on "file" (what is
// wrong with the body) or on the option the message is about.
http::Response RefusedImport(const RestContext& ctx, const Error& e, const char* field) {
  if (e.code != Errc::kInvalidArgument) return ProblemFromError(ctx.req, e);
  return Problem(
      ctx.req, {.status = 422,
                .code = "validation_failed",
                .detail = e.message,
                .errors = {{field, field == std::string("file") ? "invalid_file" : "invalid_option",
                            e.message}}});
}

// The file and the options of an upload: the body itself (text/csv, options in the query)
// or, from a form (multipart/form-data), the part named "file" and the other parts as
// options besides the query's. A response when it is neither.
struct ImportUpload {
  std::string_view file;
  std::vector<std::pair<std::string, std::string>> params;
};

std::optional<http::Response> ReadImportUpload(const RestContext& ctx, ImportUpload* up) {
  auto ct = ctx.req.Header("Content-Type");
  up->params = http::ParseForm(ctx.req.query);
  if (ct && IsCsvContentType(*ct)) {
    up->file = ctx.req.body;  // empty when streamed (UploadSource)
    return std::nullopt;
  }
  auto boundary = ct ? http::MultipartBoundary(*ct) : std::nullopt;
  if (!boundary)
    return Problem(ctx.req, {.status = 415,
                             .code = "unsupported_media_type",
                             .detail = "send the file as the body (Content-Type: text/csv) or as "
                                       "the part named file of multipart/form-data"});
  auto parts = http::ParseMultipartForm(ctx.req.body, *boundary);
  bool found = false;
  if (parts) {
    for (const http::FormPart& part : *parts) {
      if (part.name == "file" && !found) {
        up->file = part.content;
        found = true;
      } else if (part.name != "file") {
        up->params.emplace_back(part.name, std::string(part.content));
      }
    }
  }
  if (!found)
    return Problem(ctx.req, {.status = 400,
                             .code = "malformed_multipart",
                             .detail = "the form has no part named file, or is not well-formed "
                                       "multipart/form-data"});
  return std::nullopt;
}

http::Response CreateImport(crm::ImportService& imports, const Config& config,
                            const std::string& base, RestContext& ctx) {
  const uint64_t length = ctx.req.body_stream ? ctx.req.body_stream->length : ctx.req.body.size();
  if (length > static_cast<uint64_t>(config.import_max_bytes))
    return Problem(ctx.req, {.status = 413,
                             .code = "payload_too_large",
                             .detail = "the file is larger than import_max_bytes (" +
                                       std::to_string(config.import_max_bytes) + " bytes)"});
  ImportUpload up;
  if (auto refused = ReadImportUpload(ctx, &up)) return std::move(*refused);
  auto options = crm::ParseImportOptions(up.params);
  if (!options) {
    // The option the message starts with ("status must be ...", "status=subscribed needs").
    const std::string& m = options.error().message;
    std::string field = m.substr(0, m.find_first_of(" ="));
    if (field == "unknown") field = "query";
    return RefusedImport(ctx, options.error(), field.c_str());
  }
  size_t pos = 0;
  auto job = imports.Create(ImportKeyActor(ctx), *options, UploadSource(ctx, up.file, pos));
  if (!job) {
    bool about_list = job.error().message.rfind("list:", 0) == 0;
    return RefusedImport(ctx, job.error(), about_list ? "list" : "file");
  }
  auto resp = Reply(202, crm::ToJson(*job));
  resp.Set("Location", base + "/imports/" + std::to_string(job->id));
  return resp;
}

}  // namespace

bool StreamsRequestBody(const Config& config, std::string_view method, std::string_view path,
                        std::string_view content_type) {
  // Asked of every request with content (each tool call): the cheap tests first.
  return method == "POST" && path.ends_with("/imports") && IsCsvContentType(content_type) &&
         path == RestBasePath(config) + "/imports";
}

void AddImportRoutes(RestRouter& router, const RestDeps& deps) {
  crm::ImportService* imports = deps.crm->imports.get();
  router.Add({"POST", "/imports", Access::kKey, false,
              [imports, config = deps.config, base = RestBasePath(*deps.config)](RestContext& ctx) {
                return CreateImport(*imports, *config, base, ctx);
              }});
  router.Add({"GET", "/imports/{id}", Access::kKey, false, [imports](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such import");
                auto job = imports->Get(*id);
                if (!job) return ProblemFromError(ctx.req, job.error());
                return Reply(200, crm::ToJson(*job));
              }});
  router.Add({"GET", "/imports/{id}/errors", Access::kKey, false, [imports](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such import");
                auto csv = imports->ErrorsCsv(*id);
                if (!csv) return ProblemFromError(ctx.req, csv.error());
                auto resp = http::Response::Text(200, std::move(*csv), "text/csv; charset=utf-8");
                resp.Set("Cache-Control", "no-store");
                resp.Set("Content-Disposition",
                         "attachment; filename=\"import-" + std::to_string(*id) + "-errors.csv\"");
                return resp;
              }});
  router.Add({"DELETE", "/imports/{id}", Access::kKey, false, [imports](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such import");
                auto job = imports->Cancel(ImportKeyActor(ctx), *id);
                if (!job) return ProblemFromError(ctx.req, job.error());
                return Reply(200, crm::ToJson(*job));
              }});
}

}  // namespace crmd::rest
