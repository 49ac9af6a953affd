// safetensors header parsing (https://github.com/huggingface/safetensors,
// "Format"): the JSON is read through nlohmann's SAX interface by a state
// machine that accepts exactly the header grammar, so nothing unchecked is
// ever materialised: integers arrive as integers (a float, a negative or an
// integer too large for u64 is an event of its own and is rejected), counts
// are checked against ParseLimits as items arrive, duplicate keys are caught
// as they are read, and nesting cannot go deeper than the grammar allows.
#include "formats/safetensors_header.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <iterator>
#include <new>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <utility>

#include "formats/checked_math.h"

namespace amn::formats {
namespace {

using Json = nlohmann::json;

constexpr uint64_t kLengthFieldBytes = 8;

uint64_t LoadLe64(const std::byte* p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = value << 8 | static_cast<uint64_t>(p[i]);
  return value;
}

std::string Range(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

// A char iterator that publishes how far the JSON lexer has read, so SAX
// events (which carry no position) can name a byte offset. The lexer reads
// at most one character past a token, so the offset lands on or just after
// the token that caused the event.
class TrackingIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackingIterator() = default;
  TrackingIterator(const char* p, const char** read_up_to) : p_(p), read_up_to_(read_up_to) {}
  reference operator*() const { return *p_; }
  TrackingIterator& operator++() {
    ++p_;
    *read_up_to_ = p_;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const TrackingIterator& other) const { return p_ == other.p_; }

 private:
  const char* p_ = nullptr;
  const char** read_up_to_ = nullptr;
};

// Accepts exactly: { ( "__metadata__": { (string: string)* } |
//                      name: { "dtype": string, "shape": [u64*],
//                              "data_offsets": [u64, u64] } )* }
class HeaderSax {
 public:
  HeaderSax(const std::string& file, const ParseLimits& limits, uint64_t data_bytes,
            const char* json_begin, const char* const* read_up_to)
      : file_(file),
        limits_(limits),
        data_bytes_(data_bytes),
        json_begin_(json_begin),
        read_up_to_(read_up_to) {}

  // The nlohmann SAX interface (json_sax<Json>); returning false stops the parse.
  bool null() { return Unexpected("null"); }
  bool boolean(bool /*value*/) { return Unexpected("a boolean"); }
  bool number_integer(int64_t /*value*/) {
    // nlohmann reports every non-negative integer as unsigned, so this is a
    // number written with a minus sign.
    return Unexpected("a negative integer");
  }
  bool number_float(double /*value*/, const std::string& text) {
    // Also what an integer too large for u64 arrives as.
    return Unexpected("the non-integer or out-of-range number " + MessageSafe(text, 40));
  }
  bool number_unsigned(uint64_t value);
  bool string(std::string& value);
  bool binary(Json::binary_t& /*value*/) { return Unexpected("binary data"); }
  bool start_object(size_t /*elements*/);
  bool key(std::string& key);
  bool end_object();
  bool start_array(size_t /*elements*/);
  bool end_array();
  bool parse_error(size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& error) {
    return Fail(StatusCode::kInvalid, "invalid JSON: " + JsonErrorText(error));
  }

  bool done() const { return state_ == State::kDone; }
  Status TakeStatus() { return std::move(status_); }
  std::vector<TensorEntry> TakeTensors() { return std::move(tensors_); }
  std::map<std::string, std::string> TakeMetadata() { return std::move(metadata_); }

 private:
  enum class State {
    kRoot,            // before the top-level value
    kTopLevel,        // in the top-level object: a key or its end
    kTensorValue,     // after a tensor name: its object
    kTensorFields,    // in a tensor object: a field name or its end
    kFieldValue,      // after a field name: its value
    kShape,           // in "shape": integers or the end
    kOffsets,         // in "data_offsets": integers or the end
    kMetadataValue,   // after "__metadata__": its object
    kMetadata,        // in the metadata object: a key or its end
    kMetadataString,  // after a metadata key: its string
    kDone,            // after the top-level object
  };
  enum Field : unsigned { kDtype = 1, kShapeField = 2, kDataOffsets = 4 };

  // File offset of the last byte the lexer has read.
  uint64_t JsonOffset() const {
    const auto read = static_cast<uint64_t>(*read_up_to_ - json_begin_);
    return kLengthFieldBytes + (read == 0 ? 0 : read - 1);
  }
  bool InTensor() const {
    return state_ == State::kTensorValue || state_ == State::kTensorFields ||
           state_ == State::kFieldValue || state_ == State::kShape || state_ == State::kOffsets;
  }
  // `message` must already be MessageSafe where it quotes the file.
  bool Fail(StatusCode code, const std::string& message) {
    // One expression: `status_ = std::move(status_).WithTensor(...)` would
    // move-assign the Status onto itself.
    status_ = Status(code, MessageSafe(file_, kMessagePathBytes) + ": " + message)
                  .WithByteOffset(JsonOffset())
                  .WithTensor(InTensor() ? MessageSafe(current_.name) : std::string());
    return false;
  }
  bool Unexpected(const std::string& what);
  bool FinishTensor();

  const std::string& file_;
  const ParseLimits& limits_;
  const uint64_t data_bytes_;
  const char* const json_begin_;
  const char* const* const read_up_to_;

  State state_ = State::kRoot;
  Status status_;
  std::vector<TensorEntry> tensors_;
  std::set<std::string> names_;
  std::map<std::string, std::string> metadata_;
  bool seen_metadata_ = false;
  std::string metadata_key_;
  // The tensor being read.
  TensorEntry current_;
  unsigned fields_seen_ = 0;
  Field field_ = kDtype;
  size_t offsets_seen_ = 0;
};

bool HeaderSax::Unexpected(const std::string& what) {
  switch (state_) {
    case State::kRoot:
      return Fail(StatusCode::kInvalid, "the header is " + what + ", not a JSON object");
    case State::kTensorValue:
      return Fail(StatusCode::kInvalid, "tensor entry is " + what + ", not an object");
    case State::kFieldValue:
      switch (field_) {
        case kDtype:
          return Fail(StatusCode::kInvalid, "\"dtype\" is " + what + ", not a string");
        case kShapeField:
          return Fail(StatusCode::kInvalid, "\"shape\" is " + what + ", not an array of integers");
        case kDataOffsets:
          return Fail(StatusCode::kInvalid,
                      "\"data_offsets\" is " + what + ", not an array of two integers");
      }
      break;
    case State::kShape:
      return Fail(StatusCode::kInvalid, "\"shape\" holds " + what + ", not a non-negative integer");
    case State::kOffsets:
      return Fail(StatusCode::kInvalid,
                  "\"data_offsets\" holds " + what + ", not a non-negative integer");
    case State::kMetadataValue:
      return Fail(StatusCode::kInvalid,
                  "\"__metadata__\" is " + what + ", not an object of strings");
    case State::kMetadataString:
      return Fail(StatusCode::kInvalid, "\"__metadata__\" value for key \"" +
                                            MessageSafe(metadata_key_) + "\" is " + what +
                                            ", not a string");
    case State::kTopLevel:
    case State::kTensorFields:
    case State::kMetadata:
    case State::kDone:
      break;  // the lexer only delivers keys or ends here
  }
  return Fail(StatusCode::kInvalid, "unexpected " + what);
}

bool HeaderSax::number_unsigned(uint64_t value) {
  if (state_ == State::kShape) {
    if (current_.shape.size() >= limits_.max_item_count) {
      return Fail(
          StatusCode::kLimitExceeded,
          "\"shape\" has more than " + std::to_string(limits_.max_item_count) + " dimensions");
    }
    current_.shape.push_back(value);
    return true;
  }
  if (state_ == State::kOffsets) {
    if (offsets_seen_ == 2)
      return Fail(StatusCode::kInvalid, "\"data_offsets\" has more than two values");
    (offsets_seen_ == 0 ? current_.data_begin : current_.data_end) = value;
    ++offsets_seen_;
    return true;
  }
  return Unexpected("the integer " + std::to_string(value));
}

bool HeaderSax::string(std::string& value) {
  if (state_ == State::kFieldValue && field_ == kDtype) {
    const std::optional<Dtype> dtype = DtypeFromName(value);
    if (!dtype)
      return Fail(StatusCode::kUnsupported, "unknown dtype \"" + MessageSafe(value, 40) + "\"");
    current_.dtype = *dtype;
    state_ = State::kTensorFields;
    return true;
  }
  if (state_ == State::kMetadataString) {
    metadata_.emplace(std::move(metadata_key_), std::move(value));
    state_ = State::kMetadata;
    return true;
  }
  return Unexpected("the string \"" + MessageSafe(value, 40) + "\"");
}

bool HeaderSax::start_object(size_t /*elements*/) {
  switch (state_) {
    case State::kRoot:
      state_ = State::kTopLevel;
      return true;
    case State::kTensorValue:
      state_ = State::kTensorFields;
      return true;
    case State::kMetadataValue:
      state_ = State::kMetadata;
      return true;
    default:
      return Unexpected("an object");
  }
}

bool HeaderSax::key(std::string& key) {
  if (state_ == State::kTopLevel) {
    if (key == "__metadata__") {
      if (seen_metadata_) return Fail(StatusCode::kInvalid, "duplicate key \"__metadata__\"");
      seen_metadata_ = true;
      state_ = State::kMetadataValue;
      return true;
    }
    if (names_.contains(key)) {
      current_.name = key;
      state_ = State::kTensorValue;  // so the error names the tensor
      return Fail(StatusCode::kInvalid, "duplicate tensor name");
    }
    if (tensors_.size() >= limits_.max_item_count) {
      return Fail(StatusCode::kLimitExceeded, "more than " +
                                                  std::to_string(limits_.max_item_count) +
                                                  " tensors (limits.max_item_count)");
    }
    names_.insert(key);
    current_ = TensorEntry{};
    current_.name = std::move(key);
    fields_seen_ = 0;
    offsets_seen_ = 0;
    state_ = State::kTensorValue;
    return true;
  }
  if (state_ == State::kTensorFields) {
    if (key == "dtype") {
      field_ = kDtype;
    } else if (key == "shape") {
      field_ = kShapeField;
    } else if (key == "data_offsets") {
      field_ = kDataOffsets;
    } else {
      return Fail(StatusCode::kInvalid, "unexpected key \"" + MessageSafe(key, 40) +
                                            "\" (a tensor has only dtype, shape and data_offsets)");
    }
    if ((fields_seen_ & field_) != 0)
      return Fail(StatusCode::kInvalid, "duplicate key \"" + MessageSafe(key) + "\"");
    fields_seen_ |= field_;
    state_ = State::kFieldValue;
    return true;
  }
  if (state_ == State::kMetadata) {
    if (metadata_.contains(key))
      return Fail(StatusCode::kInvalid,
                  "duplicate \"__metadata__\" key \"" + MessageSafe(key) + "\"");
    if (metadata_.size() >= limits_.max_item_count) {
      return Fail(
          StatusCode::kLimitExceeded,
          "\"__metadata__\" has more than " + std::to_string(limits_.max_item_count) + " entries");
    }
    metadata_key_ = std::move(key);
    state_ = State::kMetadataString;
    return true;
  }
  return Unexpected("a key");
}

bool HeaderSax::end_object() {
  switch (state_) {
    case State::kTopLevel:
      state_ = State::kDone;
      return true;
    case State::kMetadata:
      state_ = State::kTopLevel;
      return true;
    case State::kTensorFields:
      if (!FinishTensor()) return false;
      state_ = State::kTopLevel;
      return true;
    default:
      return Unexpected("the end of an object");
  }
}

bool HeaderSax::start_array(size_t /*elements*/) {
  if (state_ == State::kFieldValue && field_ == kShapeField) {
    state_ = State::kShape;
    return true;
  }
  if (state_ == State::kFieldValue && field_ == kDataOffsets) {
    state_ = State::kOffsets;
    return true;
  }
  return Unexpected("an array");
}

bool HeaderSax::end_array() {
  if (state_ == State::kShape) {
    state_ = State::kTensorFields;
    return true;
  }
  if (state_ == State::kOffsets) {
    if (offsets_seen_ != 2)
      return Fail(StatusCode::kInvalid, "\"data_offsets\" needs two values [begin, end]");
    state_ = State::kTensorFields;
    return true;
  }
  return Unexpected("the end of an array");
}

// The per-tensor rules; the tiling of the data section is checked once all
// tensors are known.
bool HeaderSax::FinishTensor() {
  for (const auto& [bit, name] : {std::pair{kDtype, "dtype"}, std::pair{kShapeField, "shape"},
                                  std::pair{kDataOffsets, "data_offsets"}}) {
    if ((fields_seen_ & bit) == 0)
      return Fail(StatusCode::kInvalid, std::string("missing \"") + name + "\"");
  }
  // A zero dimension makes the product zero whatever the others are.
  const std::optional<uint64_t> count = ElementCount(current_.shape);
  if (!count) return Fail(StatusCode::kInvalid, "the shape's element count overflows 64 bits");
  const uint64_t elements = *count;
  uint64_t expected_bytes = 0;
  if (!CheckedMul(elements, DtypeBytes(current_.dtype), &expected_bytes)) {
    return Fail(StatusCode::kInvalid, "the tensor's byte size (" + std::to_string(elements) +
                                          " x " + std::string(DtypeName(current_.dtype)) +
                                          ") overflows 64 bits");
  }
  const uint64_t begin = current_.data_begin, end = current_.data_end;
  if (begin > end) {
    return Fail(StatusCode::kInvalid,
                "data_offsets " + Range(begin, end) + " begin after they end");
  }
  if (end - begin != expected_bytes) {
    return Fail(StatusCode::kInvalid, "data_offsets " + Range(begin, end) + " hold " +
                                          std::to_string(end - begin) + " bytes but " +
                                          std::to_string(elements) + " x " +
                                          std::string(DtypeName(current_.dtype)) + " needs " +
                                          std::to_string(expected_bytes));
  }
  if (end > data_bytes_) {
    return Fail(StatusCode::kTruncated, "data_offsets " + Range(begin, end) +
                                            " run past the end of the " +
                                            std::to_string(data_bytes_) + "-byte data section");
  }
  current_.elements = elements;
  tensors_.push_back(std::move(current_));
  current_ = TensorEntry{};
  return true;
}

Status Error(StatusCode code, const std::string& file, const std::string& message) {
  return Status(code, MessageSafe(file, kMessagePathBytes) + ": " + message);
}

// Sorted by begin, the tensors must cover [0, data_bytes) with no gap and no
// overlap. Zero-size tensors may sit at any boundary.
Status CheckTiling(const std::string& file, uint64_t data_offset, uint64_t data_bytes,
                   std::vector<TensorEntry>& tensors) {
  std::sort(tensors.begin(), tensors.end(), [](const TensorEntry& a, const TensorEntry& b) {
    if (a.data_begin != b.data_begin) return a.data_begin < b.data_begin;
    if (a.data_end != b.data_end) return a.data_end < b.data_end;
    return a.name < b.name;
  });
  uint64_t covered = 0;  // data bytes [0, covered) are claimed
  const TensorEntry* last = nullptr;
  for (const TensorEntry& tensor : tensors) {
    if (tensor.data_begin < covered) {
      return Error(StatusCode::kInvalid, file,
                   "data_offsets " + Range(tensor.data_begin, tensor.data_end) +
                       " overlap tensor '" + MessageSafe(last->name) + "' at " +
                       Range(last->data_begin, last->data_end))
          .WithTensor(MessageSafe(tensor.name))
          .WithByteOffset(data_offset + tensor.data_begin);
    }
    if (tensor.data_begin > covered) {
      return Error(StatusCode::kInvalid, file,
                   "data bytes " + Range(covered, tensor.data_begin) +
                       " belong to no tensor (a hole before " + "this one)")
          .WithTensor(MessageSafe(tensor.name))
          .WithByteOffset(data_offset + covered);
    }
    covered = tensor.data_end;
    if (tensor.data_end > tensor.data_begin) last = &tensor;
  }
  if (covered != data_bytes) {
    return Error(StatusCode::kInvalid, file,
                 "data bytes " + Range(covered, data_bytes) +
                     " after the last tensor belong to no tensor")
        .WithTensor(last != nullptr ? MessageSafe(last->name) : std::string())
        .WithByteOffset(data_offset + covered);
  }
  return Status::Ok();
}

Result<SafetensorsHeader> ReadHeader(ByteSource& source, const ParseLimits& limits) {
  const std::string& file = source.name();
  const uint64_t file_bytes = source.size();
  if (file_bytes < kLengthFieldBytes) {
    return Error(StatusCode::kTruncated, file,
                 "the file is " + std::to_string(file_bytes) +
                     " bytes, shorter than the 8-byte header length")
        .WithByteOffset(0);
  }
  std::array<std::byte, kLengthFieldBytes> length_field{};
  AMN_RETURN_IF_ERROR(source.ReadAt(0, length_field));
  const uint64_t json_bytes = LoadLe64(length_field.data());
  if (json_bytes > limits.max_header_bytes) {
    return Error(StatusCode::kLimitExceeded, file,
                 "the JSON header declares " + std::to_string(json_bytes) +
                     " bytes, over the limit of " + std::to_string(limits.max_header_bytes) +
                     " (limits.max_header_bytes)")
        .WithByteOffset(0);
  }
  // json_bytes <= max_header_bytes (<= 100 MiB), so the sum cannot wrap.
  const uint64_t data_offset = kLengthFieldBytes + json_bytes;
  if (data_offset > file_bytes) {
    return Error(StatusCode::kTruncated, file,
                 "the JSON header declares " + std::to_string(json_bytes) +
                     " bytes but the file has only " +
                     std::to_string(file_bytes - kLengthFieldBytes) + " after the length field")
        .WithByteOffset(0);
  }
  const uint64_t data_bytes = file_bytes - data_offset;
  if (data_bytes > limits.max_total_bytes) {
    return Error(StatusCode::kLimitExceeded, file,
                 "the data section is " + std::to_string(data_bytes) +
                     " bytes, over the limit of " + std::to_string(limits.max_total_bytes) +
                     " (limits.max_total_bytes)")
        .WithByteOffset(data_offset);
  }

  std::string json(static_cast<size_t>(json_bytes), '\0');
  AMN_RETURN_IF_ERROR(source.ReadAt(
      kLengthFieldBytes, std::span(reinterpret_cast<std::byte*>(json.data()), json.size())));
  // nlohmann ends the input at a NUL byte (and skips a leading byte-order
  // mark); neither is JSON, so refuse both rather than ignore what follows.
  if (const size_t nul = json.find('\0'); nul != std::string::npos) {
    return Error(StatusCode::kInvalid, file, "the JSON header contains a NUL byte")
        .WithByteOffset(kLengthFieldBytes + nul);
  }
  if (json.starts_with("\xEF\xBB\xBF")) {
    return Error(StatusCode::kInvalid, file, "the JSON header starts with a byte-order mark")
        .WithByteOffset(kLengthFieldBytes);
  }

  const char* read_up_to = json.data();
  HeaderSax sax(file, limits, data_bytes, json.data(), &read_up_to);
  const bool parsed =
      Json::sax_parse(TrackingIterator(json.data(), &read_up_to),
                      TrackingIterator(json.data() + json.size(), &read_up_to), &sax,
                      Json::input_format_t::json, /*strict=*/true, /*ignore_comments=*/false);
  Status status = sax.TakeStatus();
  if (!status.ok()) return status;
  if (!parsed || !sax.done()) {
    return Error(StatusCode::kInvalid, file, "the JSON header ends early")
        .WithByteOffset(data_offset);
  }

  SafetensorsHeader header;
  header.json_bytes = json_bytes;
  header.data_offset = data_offset;
  header.data_bytes = data_bytes;
  header.tensors = sax.TakeTensors();
  header.metadata = sax.TakeMetadata();
  AMN_RETURN_IF_ERROR(CheckTiling(file, data_offset, data_bytes, header.tensors));
  return header;
}

}  // namespace

Result<SafetensorsHeader> ReadSafetensorsHeader(ByteSource& source, const ParseLimits& limits) {
  // Allocation failure (bounded by the limits, but still possible) is the
  // only exception that can reach here; nlohmann reports JSON errors through
  // the SAX handler.
  try {
    return ReadHeader(source, limits.Clamped());
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kLimitExceeded, MessageSafe(source.name(), kMessagePathBytes) +
                                                  ": out of memory reading the header");
  } catch (const std::exception& error) {
    return Status(StatusCode::kInvalid,
                  MessageSafe(source.name(), kMessagePathBytes) + ": " + JsonErrorText(error));
  }
}

}  // namespace amn::formats
