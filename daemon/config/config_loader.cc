// Text → epic.inc.v1.IncdConfig. YAML (yaml-cpp) and JSON (nlohmann SAX) are both read into one
// small tree that remembers whether each scalar was a string in the source; the tree is then
// walked against the message descriptor. Walking the descriptor ourselves (rather than handing
// JSON to protobuf's parser) is what lets every error name its field path, lets YAML write
// 0x hex QPNs, and lets the loader report all errors at once.
#include "daemon/config/config_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace epic::incd {
namespace {

namespace pb = google::protobuf;

struct Entry;

// A parsed document, independent of its syntax.
struct Node {
  enum class Kind : uint8_t { kNull, kScalar, kSequence, kMapping };
  Kind kind = Kind::kNull;
  std::string text;            // kScalar: the scalar as written (JSON numbers: their text)
  bool quoted = false;         // kScalar: a string in the source (YAML quoted, JSON "…")
  std::vector<Entry> mapping;  // in source order, duplicates kept
  std::vector<Node> sequence;
};

struct Entry {
  std::string key;
  Node value;
};

std::string join(const std::string& path, std::string_view key) {
  std::string out = path;
  if (!out.empty()) out += '.';
  out += key;
  return out;
}

std::string index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  out += s;
  out += '"';
  return out;
}

// ---- YAML ---------------------------------------------------------------------------------

Node from_yaml(const YAML::Node& y, const std::string& path, std::vector<ConfigError>& errors) {
  Node n;
  switch (y.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return n;
    case YAML::NodeType::Scalar:
      n.kind = Node::Kind::kScalar;
      n.text = y.Scalar();
      // yaml-cpp tags plain scalars "?" and quoted ones "!"; an explicit !!str also means string.
      n.quoted = y.Tag() == "!" || y.Tag() == "tag:yaml.org,2002:str";
      return n;
    case YAML::NodeType::Sequence:
      n.kind = Node::Kind::kSequence;
      for (size_t i = 0; i < y.size(); ++i)
        n.sequence.push_back(from_yaml(y[i], index(path, i), errors));
      return n;
    case YAML::NodeType::Map:
      n.kind = Node::Kind::kMapping;
      for (const auto& kv : y) {
        if (!kv.first.IsScalar()) {
          errors.push_back({path, "a mapping key must be a plain name (line " +
                                      std::to_string(kv.first.Mark().line + 1) + ")"});
          continue;
        }
        const std::string key = kv.first.Scalar();
        n.mapping.push_back({key, from_yaml(kv.second, join(path, key), errors)});
      }
      return n;
  }
  return n;
}

struct TreeResult {
  std::optional<Node> root;
  std::vector<ConfigError> errors;
};

TreeResult parse_yaml(std::string_view text) {
  TreeResult r;
  try {
    const YAML::Node doc = YAML::Load(std::string(text));
    r.root = from_yaml(doc, "", r.errors);
  } catch (const YAML::Exception& e) {
    std::string where;
    if (!e.mark.is_null()) {
      where = " at line " + std::to_string(e.mark.line + 1) + ", column " +
              std::to_string(e.mark.column + 1);
    }
    r.errors.push_back({"", "YAML syntax error" + where + ": " + e.msg});
    r.root.reset();
  }
  return r;
}

// ---- JSON ---------------------------------------------------------------------------------

class JsonTreeBuilder : public nlohmann::json::json_sax_t {
 public:
  bool null() override { return value(Node{}); }
  bool boolean(bool b) override { return scalar(b ? "true" : "false"); }
  bool number_integer(number_integer_t v) override { return scalar(std::to_string(v)); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(std::to_string(v)); }
  bool number_float(number_float_t /*v*/, const string_t& s) override { return scalar(s); }
  bool string(string_t& s) override {
    Node n;
    n.kind = Node::Kind::kScalar;
    n.text = s;
    n.quoted = true;
    return value(std::move(n));
  }
  bool binary(binary_t& /*b*/) override { return false; }  // not produced by the text parser
  bool start_object(std::size_t /*n*/) override { return open(Node::Kind::kMapping); }
  bool key(string_t& k) override {
    keys_.back() = k;
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t /*n*/) override { return open(Node::Kind::kSequence); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::json::exception& ex) override {
    std::string what = ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: …" → from "parse error".
    if (const size_t at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    error_ = "JSON syntax error: " + what;
    return false;
  }

  std::optional<Node> take_root() { return std::move(root_); }
  const std::string& error() const { return error_; }

 private:
  bool scalar(std::string text) {
    Node n;
    n.kind = Node::Kind::kScalar;
    n.text = std::move(text);
    return value(std::move(n));
  }
  bool open(Node::Kind kind) {
    Node n;
    n.kind = kind;
    stack_.push_back(std::move(n));
    keys_.emplace_back();
    return true;
  }
  bool close() {
    Node n = std::move(stack_.back());
    stack_.pop_back();
    keys_.pop_back();
    return value(std::move(n));
  }
  bool value(Node n) {
    if (stack_.empty()) {
      root_ = std::move(n);
    } else if (stack_.back().kind == Node::Kind::kMapping) {
      stack_.back().mapping.push_back({keys_.back(), std::move(n)});
    } else {
      stack_.back().sequence.push_back(std::move(n));
    }
    return true;
  }

  std::vector<Node> stack_;        // open containers, innermost last
  std::vector<std::string> keys_;  // the pending key of each open container
  std::optional<Node> root_;
  std::string error_;
};

TreeResult parse_json(std::string_view text) {
  TreeResult r;
  JsonTreeBuilder builder;
  const bool ok = nlohmann::json::sax_parse(text, &builder);
  if (!ok || !builder.error().empty()) {
    r.errors.push_back(
        {"", builder.error().empty() ? std::string("JSON syntax error") : builder.error()});
    return r;
  }
  r.root = builder.take_root();
  return r;
}

// ---- scalars ------------------------------------------------------------------------------

struct Integer {
  bool negative = false;
  uint64_t magnitude = 0;
};

// Decimal, 0x hex, 0o octal (YAML 1.2 core schema), with an optional sign. Leading zeros are
// decimal, as in YAML 1.2.
std::optional<Integer> parse_integer(std::string_view s) {
  Integer v;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    v.negative = s[0] == '-';
    s.remove_prefix(1);
  }
  unsigned base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
    base = 8;
    s.remove_prefix(2);
  }
  if (s.empty()) return std::nullopt;
  for (const char c : s) {
    unsigned d;
    if (c >= '0' && c <= '9') {
      d = static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      d = static_cast<unsigned>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      d = static_cast<unsigned>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
    if (d >= base) return std::nullopt;
    if (v.magnitude > (std::numeric_limits<uint64_t>::max() - d) / base) {
      v.magnitude = std::numeric_limits<uint64_t>::max();  // saturate: reported as out of range
      return v;
    }
    v.magnitude = v.magnitude * base + d;
  }
  return v;
}

std::optional<double> parse_double(const std::string& s) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE) return std::nullopt;
  return v;
}

// YAML 1.2 core schema booleans (JSON's true/false included).
std::optional<bool> parse_bool(std::string_view s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

// The short name of an enum value: FAULT_DIRECTION_RX → "rx", given the UNSPECIFIED prefix.
std::string short_name(const pb::EnumValueDescriptor* v) {
  const std::string& zero = v->type()->value(0)->name();  // e.g. FAULT_DIRECTION_UNSPECIFIED
  const std::string prefix = zero.substr(0, zero.size() - std::strlen("UNSPECIFIED"));
  std::string s = v->name().substr(v->name().rfind(prefix, 0) == 0 ? prefix.size() : 0);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Optimal string alignment distance: insertions, deletions, substitutions and transpositions
// of neighbours each cost 1 ("windw", "widnow" and "wndow" are all 1 from "window").
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

const char* kind_name(Node::Kind k) {
  switch (k) {
    case Node::Kind::kNull:
      return "null";
    case Node::Kind::kScalar:
      return "a scalar";
    case Node::Kind::kSequence:
      return "a list";
    case Node::Kind::kMapping:
      return "a mapping";
  }
  return "?";
}

// ---- tree → message -----------------------------------------------------------------------

class MessageFiller {
 public:
  std::vector<ConfigError> errors;

  void fill_message(const Node& n, pb::Message& msg, const std::string& path) {
    if (n.kind == Node::Kind::kNull) return;
    if (n.kind != Node::Kind::kMapping) {
      fail(path, std::string("expected a mapping, got ") + kind_name(n.kind));
      return;
    }
    const pb::Descriptor* d = msg.GetDescriptor();
    std::vector<const pb::FieldDescriptor*> seen;
    for (const auto& [key, value] : n.mapping) {
      const std::string field_path = join(path, key);
      const pb::FieldDescriptor* f = find_field(d, key);
      if (f == nullptr) {
        fail(field_path, unknown_field_message(d, key));
        continue;
      }
      if (std::find(seen.begin(), seen.end(), f) != seen.end()) {
        fail(field_path, "duplicate key (" + f->name() + " is set twice)");
        continue;
      }
      seen.push_back(f);
      if (const pb::OneofDescriptor* o = f->containing_oneof(); o != nullptr) {
        const pb::FieldDescriptor* other = msg.GetReflection()->GetOneofFieldDescriptor(msg, o);
        if (other != nullptr && value.kind != Node::Kind::kNull) {
          fail(field_path,
               "conflicts with " + other->name() + ": set exactly one of " + oneof_names(o));
          continue;
        }
      }
      fill_field(value, msg, f, field_path);
    }
  }

 private:
  void fail(std::string path, std::string message) {
    errors.push_back({std::move(path), std::move(message)});
  }

  static const pb::FieldDescriptor* find_field(const pb::Descriptor* d, const std::string& key) {
    if (const pb::FieldDescriptor* f = d->FindFieldByName(key); f != nullptr) return f;
    for (int i = 0; i < d->field_count(); ++i) {
      if (d->field(i)->json_name() == key) return d->field(i);  // protobuf JSON's lowerCamelCase
    }
    return nullptr;
  }

  static std::string oneof_names(const pb::OneofDescriptor* o) {
    std::string s;
    for (int i = 0; i < o->field_count(); ++i) {
      if (i > 0) s += i + 1 == o->field_count() ? " or " : ", ";
      s += o->field(i)->name();
    }
    return s;
  }

  static std::string unknown_field_message(const pb::Descriptor* d, const std::string& key) {
    std::string best;
    size_t best_distance = std::numeric_limits<size_t>::max();
    std::string known;
    for (int i = 0; i < d->field_count(); ++i) {
      const std::string& name = d->field(i)->name();
      if (i > 0) known += ", ";
      known += name;
      // Suggest only close misspellings: one edit per three letters of the name.
      const size_t dist = edit_distance(key, name);
      if (dist <= std::max<size_t>(1, name.size() / 3) && dist < best_distance) {
        best_distance = dist;
        best = name;
      }
    }
    std::string msg = "unknown field " + quote(key);
    if (!best.empty()) return msg + " (did you mean " + quote(best) + "?)";
    return msg + "; known fields: " + known;
  }

  void fill_field(const Node& n, pb::Message& msg, const pb::FieldDescriptor* f,
                  const std::string& path) {
    const pb::Reflection* r = msg.GetReflection();
    if (n.kind == Node::Kind::kNull) return;  // null = absent, as in protobuf JSON
    if (f->is_repeated()) {
      if (n.kind != Node::Kind::kSequence) {
        fail(path, std::string("expected a list, got ") + kind_name(n.kind));
        return;
      }
      for (size_t i = 0; i < n.sequence.size(); ++i) {
        const Node& item = n.sequence[i];
        if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
          fill_message(item, *r->AddMessage(&msg, f), index(path, i));
        } else {
          set_scalar(item, msg, f, index(path, i));
        }
      }
      return;
    }
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      pb::Message* sub = r->MutableMessage(&msg, f);  // present even when written as {}
      fill_message(n, *sub, path);
      return;
    }
    set_scalar(n, msg, f, path);
  }

  template <typename T>
  std::optional<T> integer(const Node& n, const std::string& path) {
    std::optional<Integer> v = parse_integer(n.text);
    constexpr bool kIsSigned = std::numeric_limits<T>::is_signed;
    if (v && v->magnitude == 0) v->negative = false;  // "-0"
    if (!v || (v->negative && !kIsSigned)) {
      fail(path, std::string("expected ") + (kIsSigned ? "an integer" : "an unsigned integer") +
                     " (decimal or 0x hex), got " + quote(n.text));
      return std::nullopt;
    }
    const auto max = static_cast<uint64_t>(std::numeric_limits<T>::max());
    if (v->negative) {  // signed T only: max + 1 cannot overflow
      if (v->magnitude > max + 1) {
        fail(path, n.text + " is out of range (at least " +
                       std::to_string(std::numeric_limits<T>::min()) + ")");
        return std::nullopt;
      }
      return static_cast<T>(-static_cast<int64_t>(v->magnitude - 1) - 1);
    }
    if (v->magnitude > max) {
      fail(path, n.text + " is out of range (at most " + std::to_string(max) + ")");
      return std::nullopt;
    }
    return static_cast<T>(v->magnitude);
  }

  void set_scalar(const Node& n, pb::Message& msg, const pb::FieldDescriptor* f,
                  const std::string& path) {
    const pb::Reflection* r = msg.GetReflection();
    const bool add = f->is_repeated();
    if (n.kind != Node::Kind::kScalar) {
      fail(path, "expected " + type_name(f) + ", got " + kind_name(n.kind));
      return;
    }
    switch (f->cpp_type()) {
      case pb::FieldDescriptor::CPPTYPE_STRING:
        add ? r->AddString(&msg, f, n.text) : r->SetString(&msg, f, n.text);
        return;
      case pb::FieldDescriptor::CPPTYPE_BOOL: {
        const std::optional<bool> b = n.quoted ? std::nullopt : parse_bool(n.text);
        if (!b) {
          fail(path, "expected true or false (unquoted), got " + quote(n.text));
          return;
        }
        add ? r->AddBool(&msg, f, *b) : r->SetBool(&msg, f, *b);
        return;
      }
      case pb::FieldDescriptor::CPPTYPE_INT32:
        if (const auto v = integer<int32_t>(n, path)) {
          add ? r->AddInt32(&msg, f, *v) : r->SetInt32(&msg, f, *v);
        }
        return;
      case pb::FieldDescriptor::CPPTYPE_INT64:
        if (const auto v = integer<int64_t>(n, path)) {
          add ? r->AddInt64(&msg, f, *v) : r->SetInt64(&msg, f, *v);
        }
        return;
      case pb::FieldDescriptor::CPPTYPE_UINT32:
        if (const auto v = integer<uint32_t>(n, path)) {
          add ? r->AddUInt32(&msg, f, *v) : r->SetUInt32(&msg, f, *v);
        }
        return;
      case pb::FieldDescriptor::CPPTYPE_UINT64:
        if (const auto v = integer<uint64_t>(n, path)) {
          add ? r->AddUInt64(&msg, f, *v) : r->SetUInt64(&msg, f, *v);
        }
        return;
      case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      case pb::FieldDescriptor::CPPTYPE_FLOAT: {
        const std::optional<double> v = parse_double(n.text);
        if (!v) {
          fail(path, "expected a number, got " + quote(n.text));
          return;
        }
        if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_DOUBLE) {
          add ? r->AddDouble(&msg, f, *v) : r->SetDouble(&msg, f, *v);
        } else {
          const auto fv = static_cast<float>(*v);
          add ? r->AddFloat(&msg, f, fv) : r->SetFloat(&msg, f, fv);
        }
        return;
      }
      case pb::FieldDescriptor::CPPTYPE_ENUM: {
        const pb::EnumDescriptor* e = f->enum_type();
        for (int i = 1; i < e->value_count(); ++i) {  // value 0 is "unspecified"
          const pb::EnumValueDescriptor* v = e->value(i);
          if (n.text == short_name(v) || n.text == v->name()) {
            add ? r->AddEnum(&msg, f, v) : r->SetEnum(&msg, f, v);
            return;
          }
        }
        fail(path, quote(n.text) + " is not one of " + enum_choices(e));
        return;
      }
      case pb::FieldDescriptor::CPPTYPE_MESSAGE:
        break;  // handled by fill_field
    }
  }

  static std::string enum_choices(const pb::EnumDescriptor* e) {
    std::string s;
    for (int i = 1; i < e->value_count(); ++i) {
      if (i > 1) s += '|';
      s += short_name(e->value(i));
    }
    return s;
  }

  static std::string type_name(const pb::FieldDescriptor* f) {
    switch (f->cpp_type()) {
      case pb::FieldDescriptor::CPPTYPE_STRING:
        return "a string";
      case pb::FieldDescriptor::CPPTYPE_BOOL:
        return "true or false";
      case pb::FieldDescriptor::CPPTYPE_INT32:
      case pb::FieldDescriptor::CPPTYPE_INT64:
        return "an integer";
      case pb::FieldDescriptor::CPPTYPE_UINT32:
      case pb::FieldDescriptor::CPPTYPE_UINT64:
        return "an unsigned integer";
      case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      case pb::FieldDescriptor::CPPTYPE_FLOAT:
        return "a number";
      case pb::FieldDescriptor::CPPTYPE_ENUM:
        return "one of " + enum_choices(f->enum_type());
      case pb::FieldDescriptor::CPPTYPE_MESSAGE:
        return "a mapping";
    }
    return "a value";
  }
};

// True when `a` is `b` or lies on the same line of descent (one path is a prefix of the other
// at a component boundary): an error there is most likely a consequence of the other.
bool related(const std::string& a, const std::string& b) {
  const auto under = [](const std::string& child, const std::string& parent) {
    return child.size() > parent.size() && child.compare(0, parent.size(), parent) == 0 &&
           (child[parent.size()] == '.' || child[parent.size()] == '[');
  };
  return a == b || under(a, b) || under(b, a);
}

}  // namespace

ProtoParseResult parse_config_proto(std::string_view text, bool json) {
  ProtoParseResult out;
  TreeResult tree = json ? parse_json(text) : parse_yaml(text);
  out.errors = std::move(tree.errors);
  if (!tree.root) return out;
  const Node& root = *tree.root;
  if (root.kind == Node::Kind::kNull) return out;  // an empty file: every field absent
  if (root.kind != Node::Kind::kMapping) {
    out.errors.push_back({"", std::string("the config must be a mapping at the top level, got ") +
                                  kind_name(root.kind)});
    return out;
  }
  MessageFiller filler;
  filler.fill_message(root, out.message, "");
  out.errors.insert(out.errors.end(), filler.errors.begin(), filler.errors.end());
  return out;
}

LoadResult parse_config(std::string_view text, bool json, const ConfigOverrides& overrides) {
  ProtoParseResult parsed = parse_config_proto(text, json);
  if (!overrides.manager_address.empty())
    parsed.message.mutable_manager()->set_address(overrides.manager_address);
  if (!overrides.switch_id.empty())
    parsed.message.mutable_manager()->set_switch_id(overrides.switch_id);
  const bool unreadable = std::any_of(parsed.errors.begin(), parsed.errors.end(),
                                      [](const ConfigError& e) { return e.path.empty(); });
  if (unreadable) return {std::nullopt, std::move(parsed.errors)};
  LoadResult validated = validate_config(parsed.message);
  if (parsed.errors.empty()) return validated;
  // Report every reading error, plus the semantic errors that are not just their echo (a field
  // that failed to parse is absent, and absence is then reported again by validation).
  LoadResult out{std::nullopt, std::move(parsed.errors)};
  const size_t reading_errors = out.errors.size();
  for (ConfigError& e : validated.errors) {
    const bool echo = std::any_of(out.errors.begin(), out.errors.begin() + reading_errors,
                                  [&](const ConfigError& p) { return related(e.path, p.path); });
    if (!echo) out.errors.push_back(std::move(e));
  }
  return out;
}

LoadResult load_config_file(const std::string& path, const ConfigOverrides& overrides) {
  const auto fail = [&](std::string message) {
    return LoadResult{std::nullopt, {ConfigError{"", std::move(message)}}};
  };
  const size_t dot = path.rfind('.');
  std::string ext = dot == std::string::npos ? "" : path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext != ".yaml" && ext != ".yml" && ext != ".json") {
    return fail("config file " + quote(path) +
                ": unknown format; the name must end in .yaml, .yml or .json");
  }
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"),
                                                          &std::fclose);
  if (!f) return fail("cannot open config file " + quote(path) + ": " + std::strerror(errno));
  std::string text;
  char buf[8192];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f.get())) > 0) text.append(buf, got);
  if (std::ferror(f.get())) {
    return fail("cannot read config file " + quote(path) + ": " + std::strerror(errno));
  }
  return parse_config(text, ext == ".json", overrides);
}

}  // namespace epic::incd
