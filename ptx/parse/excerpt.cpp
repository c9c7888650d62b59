#include "parse/excerpt.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace xcuda::ptx {
namespace {

// A top-level statement: a directive ending in `;`, or one with a braced body (a function, or a
// DWARF .section).
struct Item {
  size_t begin = 0;  // just after the previous item, so that items tile the text
  size_t body = 0;   // its `{`, or `end` when it has none
  size_t end = 0;
  std::string_view function;  // the name of a defined .entry or .func; empty otherwise
};

bool is_name_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
         c == '%';
}

// At a comment or a string: the position just after it, or npos when it does not end. Elsewhere:
// `position` itself.
size_t skip_comment_or_string(std::string_view text, size_t position) {
  auto after = [&](size_t found, size_t length) { return found == std::string_view::npos ? found : found + length; };
  if (text.substr(position, 2) == "//") return after(text.find('\n', position), 1);
  if (text.substr(position, 2) == "/*") return after(text.find("*/", position + 2), 2);
  if (text[position] != '"') return position;
  for (size_t end = position + 1; end < text.size(); ++end) {
    if (text[end] == '\\') ++end;
    else if (text[end] == '"') return end + 1;
  }
  return std::string_view::npos;
}

// Calls `visit` with every run of name characters in [begin, end) outside comments and strings:
// whatever may be a name.
template <typename Visit>
void for_each_word(std::string_view text, size_t begin, size_t end, const Visit& visit) {
  for (size_t position = begin; position < end;) {
    if (size_t skipped = skip_comment_or_string(text, position); skipped != position) {
      position = skipped;
    } else if (is_name_character(text[position])) {
      size_t start = position;
      while (position < end && is_name_character(text[position])) ++position;
      visit(text.substr(start, position - start));
    } else {
      ++position;
    }
  }
}

// The name a function header defines: the word after .entry, or after .func and its return
// parameters in parentheses.
std::string_view defined_function(std::string_view text, const Item& item) {
  std::string_view header = text.substr(item.begin, item.body - item.begin);
  size_t keyword = std::string_view::npos;
  for (std::string_view word : {std::string_view(".entry"), std::string_view(".func")}) {
    for (size_t found = header.find(word); found != std::string_view::npos; found = header.find(word, found + 1)) {
      size_t after = found + word.size();
      if (after == header.size() || !is_name_character(header[after])) {
        keyword = after;
        break;
      }
    }
    if (keyword != std::string_view::npos) break;
  }
  if (keyword == std::string_view::npos) return {};
  size_t position = header.find_first_not_of(" \t\r\n", keyword);
  if (position != std::string_view::npos && header[position] == '(') {
    position = header.find(')', position);
    if (position != std::string_view::npos) position = header.find_first_not_of(" \t\r\n", position + 1);
  }
  if (position == std::string_view::npos) return {};
  size_t start = position;
  while (position < header.size() && is_name_character(header[position])) ++position;
  return header.substr(start, position - start);
}

// The text as items, or nothing when its braces, comments or strings do not close.
std::optional<std::vector<Item>> split_items(std::string_view text) {
  std::vector<Item> items;
  size_t begin = 0, body = 0;
  int depth = 0;
  for (size_t position = 0; position < text.size();) {
    if (size_t skipped = skip_comment_or_string(text, position); skipped != position) {
      // A line comment may end the text.
      if (skipped == std::string_view::npos && text.substr(position, 2) != "//") return std::nullopt;
      position = std::min(skipped, text.size());
      continue;
    }
    char c = text[position++];
    if (c == '{') {
      if (depth++ == 0) body = position - 1;
    } else if (c == '}') {
      if (--depth < 0) return std::nullopt;
      if (depth > 0) continue;
      items.push_back(Item{begin, body, position, {}});
      items.back().function = defined_function(text, items.back());
      begin = position;
    } else if (c == ';' && depth == 0) {
      items.push_back(Item{begin, position, position, {}});
      begin = position;
    }
  }
  if (depth != 0) return std::nullopt;
  return items;
}

}  // namespace

std::optional<std::string> excerpt_for_kernels(std::string_view text, std::span<const std::string> kernels) {
  std::optional<std::vector<Item>> items = split_items(text);
  if (!items) return std::nullopt;
  std::unordered_multimap<std::string_view, size_t> definitions;
  for (size_t index = 0; index < items->size(); ++index)
    if (!(*items)[index].function.empty()) definitions.emplace((*items)[index].function, index);
  std::vector<bool> kept(items->size(), false);
  std::vector<size_t> pending;
  // Each name's definitions are looked at once, however often bodies mention it.
  std::unordered_set<std::string_view> reached;
  auto reach = [&](std::string_view name) {
    if (!definitions.contains(name) || !reached.insert(name).second) return;
    auto [first, last] = definitions.equal_range(name);
    for (auto definition = first; definition != last; ++definition)
      if (!kept[definition->second]) {
        kept[definition->second] = true;
        pending.push_back(definition->second);
      }
  };
  for (const std::string& kernel : kernels) {
    if (!definitions.contains(kernel)) return std::nullopt;
    reach(kernel);
  }
  for (const Item& item : *items)
    if (item.function.empty()) for_each_word(text, item.begin, item.end, reach);
  while (!pending.empty()) {
    const Item& item = (*items)[pending.back()];
    pending.pop_back();
    for_each_word(text, item.body, item.end, reach);
  }
  std::string excerpt;
  excerpt.reserve(text.size());
  for (size_t index = 0; index < items->size(); ++index) {
    const Item& item = (*items)[index];
    if (item.function.empty() || kept[index]) {
      excerpt.append(text.substr(item.begin, item.end - item.begin));
      continue;
    }
    for (size_t position = item.begin; position < item.end; ++position)
      if (text[position] == '\n') excerpt.push_back('\n');
  }
  size_t tail = items->empty() ? 0 : items->back().end;
  excerpt.append(text.substr(tail));
  return excerpt;
}

}  // namespace xcuda::ptx
