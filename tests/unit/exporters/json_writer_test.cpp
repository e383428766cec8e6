// The streaming JSON writer against nlohmann::json::dump(2), whose bytes it reproduces: every
// byte value at every position of strings that span the writer's 4- and 8-byte words, escapes,
// invalid UTF-8, strings longer than its staging buffer, nesting deeper than its indentation
// table, literal keys, keys checked at run time and pre-escaped literals, in random documents.
#include "views/json_writer.hpp"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace nodetopo::exporters::detail {
namespace {

using Ordered = nlohmann::ordered_json;

std::string dump(const Ordered& doc) {
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string escaped_by_nlohmann(const std::string& text) {
  return Ordered(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The three ways a string reaches the output: an array element, a member after a literal key
// (written in one piece with its key), a key known only at run time.
std::string as_element(const std::string& text) {
  JsonWriter j;
  j.begin_array();
  j.value(text);
  j.end_array();
  return j.take();
}

std::string as_member(const std::string& text) {
  JsonWriter j;
  j.begin_object();
  j.field("k", text);
  j.end_object();
  return j.take();
}

std::string as_key(const std::string& text) {
  JsonWriter j;
  j.begin_object();
  j.field(text, 1);
  j.end_object();
  return j.take();
}

TEST(JsonWriter, EveryByteAtEveryPositionIsWrittenLikeNlohmann) {
  for (std::size_t size = 1; size <= 20; ++size) {
    for (std::size_t at = 0; at < size; ++at) {
      for (int byte = 0; byte < 256; ++byte) {
        std::string text(size, 'a');
        text[at] = static_cast<char>(byte);
        const std::string literal = escaped_by_nlohmann(text);
        std::string appended;
        append_json_string(appended, text);
        const bool same = appended == literal && as_element(text) == dump(Ordered::array({text})) &&
                          as_member(text) == dump(Ordered{{"k", text}}) &&
                          as_key(text) == dump(Ordered{{text, 1}});
        if (!same) {
          FAIL() << "byte " << byte << " at " << at << " of " << size << ": " << literal;
        }
      }
    }
  }
}

TEST(JsonWriter, EscapesAndUtf8LikeNlohmann) {
  const std::vector<std::string> texts = {
      "",
      "plain",
      "quote \" and backslash \\ and slash /",
      "\b\f\n\r\t\x01\x1f\x7f",
      std::string("nul \0 inside", 12),
      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",   // valid UTF-8
      "Box \xff\xfe",                                // invalid bytes
      "cut \xe2\x82",                                // truncated sequence at the end
      "\xe2\x82 cut in the middle, then \" and \n",  // invalid, then escapes
      "\xc0\xaf overlong",
      "\xed\xa0\x80 surrogate",
  };
  for (const std::string& text : texts) {
    std::string appended;
    append_json_string(appended, text);
    EXPECT_EQ(appended, escaped_by_nlohmann(text)) << text;
    EXPECT_EQ(as_element(text), dump(Ordered::array({text}))) << text;
    EXPECT_EQ(as_member(text), dump(Ordered{{"k", text}})) << text;
    EXPECT_EQ(as_key(text), dump(Ordered{{text, 1}})) << text;
  }
}

TEST(JsonWriter, StringsLongerThanTheStagingBuffer) {
  for (std::size_t size : {500U, 509U, 510U, 511U, 512U, 2047U, 2048U, 5000U}) {
    std::string text(size, 'x');
    EXPECT_EQ(as_element(text), dump(Ordered::array({text}))) << size;
    EXPECT_EQ(as_member(text), dump(Ordered{{"k", text}})) << size;
    EXPECT_EQ(as_key(text), dump(Ordered{{text, 1}})) << size;
    text[size / 2] = '"';
    EXPECT_EQ(as_member(text), dump(Ordered{{"k", text}})) << size;
    EXPECT_EQ(as_key(text), dump(Ordered{{text, 1}})) << size;
  }
}

TEST(JsonWriter, ScalarsAndEmptyContainers) {
  JsonWriter j;
  j.begin_object();
  j.field("min", std::numeric_limits<std::int64_t>::min());
  j.field("max", std::numeric_limits<std::int64_t>::max());
  j.field("umax", std::numeric_limits<std::uint64_t>::max());
  j.field("zero", 0U);
  j.field("small", static_cast<std::uint8_t>(255));
  j.field("negative", -7);
  j.field("yes", true);
  j.field("no", false);
  j.key("empty_object");
  j.begin_object();
  j.end_object();
  j.key("empty_array");
  j.begin_array();
  j.end_array();
  j.key("array");
  j.begin_array();
  j.value(1);
  j.value("two");
  j.value(false);
  j.begin_object();
  j.end_object();
  j.end_array();
  j.end_object();
  const Ordered expected = {
      {"min", std::numeric_limits<std::int64_t>::min()},
      {"max", std::numeric_limits<std::int64_t>::max()},
      {"umax", std::numeric_limits<std::uint64_t>::max()},
      {"zero", 0U},
      {"small", 255},
      {"negative", -7},
      {"yes", true},
      {"no", false},
      {"empty_object", Ordered::object()},
      {"empty_array", Ordered::array()},
      {"array", Ordered::array({1, "two", false, Ordered::object()})},
  };
  EXPECT_EQ(j.take_with_newline(), dump(expected) + "\n");
  // The writer starts over after take().
  j.begin_array();
  j.end_array();
  EXPECT_EQ(j.take(), "[]");
}

TEST(JsonWriter, NestingDeeperThanTheIndentationTable) {
  for (int depth : {59, 60, 61, 62, 100, 300}) {
    JsonWriter j;
    Ordered expected = Ordered::array({"leaf"});
    for (int level = 0; level < depth; ++level) {
      expected = level % 2 == 0 ? Ordered{{"k", expected}, {"s", "v"}, {"n", level}}
                                : Ordered::array({expected, "v", level});
    }
    // Write the same nesting from the outside in.
    auto write = [&j](auto&& self, int level) -> void {
      if (level < 0) {
        j.begin_array();
        j.value("leaf");
        j.end_array();
        return;
      }
      if (level % 2 == 0) {
        j.begin_object();
        j.key("k");
        self(self, level - 1);
        j.field("s", "v");
        j.field(std::string("n"), level);
        j.end_object();
      } else {
        j.begin_array();
        self(self, level - 1);
        j.value("v");
        j.value(level);
        j.end_array();
      }
    };
    write(write, depth - 1);
    EXPECT_EQ(j.take(), dump(expected)) << depth;
  }
}

TEST(JsonWriter, LiteralsAreWrittenAsTheStringsTheyHold) {
  const JsonLiteral name("GPU\"0\"");
  const JsonLiteral label("NV18");
  const JsonLiteral long_label(std::string(700, 'y'));
  JsonWriter j;
  j.begin_object();
  j.key(name);
  j.begin_object();
  j.field(name, label);
  j.field(JsonLiteral("NIC0"), long_label);
  j.field(label, 3);
  j.end_object();
  j.field("list", label);
  j.end_object();
  const Ordered expected = {
      {"GPU\"0\"", {{"GPU\"0\"", "NV18"}, {"NIC0", std::string(700, 'y')}, {"NV18", 3}}},
      {"list", "NV18"},
  };
  EXPECT_EQ(j.take(), dump(expected));
}

// Random documents: every kind of key and value at random depths, long enough to pass through
// the staging buffer many times.
class RandomDocument {
 public:
  explicit RandomDocument(std::uint32_t seed) : rng_(seed) {}

  void object(JsonWriter& j, Ordered& doc, int depth) {
    j.begin_object();
    doc = Ordered::object();
    const int members = pick(0, 8);
    for (int m = 0; m < members; ++m) {
      // Unique keys: ordered_json would overwrite a repeated one.
      const int kind = pick(0, 2);
      if (kind == 0) {
        const std::size_t k = static_cast<std::size_t>(m);  // literal keys, in order
        const std::string key(kLiteralKeys[k % kLiteralKeys.size()].text());
        if (doc.contains(key)) continue;
        j.key(kLiteralKeys[k % kLiteralKeys.size()]);
        member_value(j, doc[key], depth);
      } else if (kind == 1) {
        const std::string key = text() + "#" + std::to_string(m);
        j.key(key);
        member_value(j, doc[key], depth);
      } else {
        // A string member written in one piece with its literal key.
        const std::string value = text();
        j.field("one_piece", value);
        doc["one_piece"] = value;
        break;
      }
    }
    j.end_object();
  }

  void array(JsonWriter& j, Ordered& doc, int depth) {
    j.begin_array();
    doc = Ordered::array();
    const int elements = pick(0, 6);
    for (int e = 0; e < elements; ++e) {
      doc.push_back(nullptr);
      member_value(j, doc.back(), depth);
    }
    j.end_array();
  }

 private:
  static constexpr std::array<JsonKey, 6> kLiteralKeys = {"id",        "kind", "children",
                                                          "vendor_id", "x",    "sysfs_path"};

  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }

  std::string text() {
    static const std::string kAlphabet =
        std::string("abcdefghijklmnopqrstuvwxyz0123456789:/._- \"\\\n\t\x01\x7f") + "\xc3\xa9\xff";
    std::string out;
    const int size = pick(0, 10) == 0 ? pick(100, 700) : pick(0, 40);
    const bool plain = pick(0, 3) != 0;
    for (int i = 0; i < size; ++i) {
      const auto limit = static_cast<int>(plain ? 41 : kAlphabet.size() - 1);
      out += kAlphabet[static_cast<std::size_t>(pick(0, limit))];
    }
    return out;
  }

  void member_value(JsonWriter& j, Ordered& doc, int depth) {
    switch (depth > 6 ? pick(0, 3) : pick(0, 5)) {
      case 0: {
        const std::string value = text();
        j.value(value);
        doc = value;
        break;
      }
      case 1: {
        const auto value = static_cast<std::int64_t>(rng_()) - (1LL << 31);
        j.value(value);
        doc = value;
        break;
      }
      case 2: {
        const bool flag = pick(0, 1) == 1;
        j.value(flag);
        doc = flag;
        break;
      }
      case 3: {
        const std::string value = text();
        j.value(JsonLiteral(value));
        doc = value;
        break;
      }
      case 4:
        object(j, doc, depth + 1);
        break;
      default:
        array(j, doc, depth + 1);
        break;
    }
  }

  std::mt19937 rng_;
};

TEST(JsonWriter, RandomDocumentsMatchNlohmann) {
  std::size_t bytes = 0;
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    RandomDocument random(seed);
    JsonWriter j;
    Ordered expected;
    if (seed % 2 == 0) {
      random.object(j, expected, 0);
    } else {
      random.array(j, expected, 0);
    }
    const std::string written = j.take();
    bytes += written.size();
    ASSERT_EQ(written, dump(expected)) << "seed " << seed;
  }
  EXPECT_GT(bytes, 100'000U) << "documents long enough to pass the staging buffer many times";
}

// Streaming hands the same bytes over in order, in pieces of about a chunk (long tokens may make
// one longer), and a document the size of a large node's model in many pieces.
TEST(JsonWriter, StreamingHandsOverTheSameBytesInChunks) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    std::vector<std::string> pieces;
    const JsonWriter::Sink sink = [&pieces](std::string_view piece) { pieces.emplace_back(piece); };
    Ordered expected;
    {
      JsonWriter j(sink);
      j.begin_array();
      // Random documents in one until it spans several chunks.
      std::size_t size = 0;
      for (std::uint32_t part = 0; size < 4 * JsonWriter::kChunkSize; ++part) {
        RandomDocument random(seed * 1000 + part);
        Ordered doc;
        random.object(j, doc, 1);
        size += dump(doc).size();
        expected.push_back(std::move(doc));
      }
      j.end_array();
      j.finish();
    }
    std::string streamed;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      ASSERT_FALSE(pieces[i].empty()) << "seed " << seed << " piece " << i;
      if (i + 1 < pieces.size()) {
        EXPECT_GE(pieces[i].size(), JsonWriter::kChunkSize) << "seed " << seed << " piece " << i;
      }
      streamed += pieces[i];
    }
    ASSERT_EQ(streamed, dump(expected) + "\n") << "seed " << seed;
    EXPECT_GE(pieces.size(), 4U) << "seed " << seed;
  }
}

}  // namespace
}  // namespace nodetopo::exporters::detail
