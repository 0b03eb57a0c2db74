#pragma once
// Changes to a running run (torch-free): the text forms `--change`, the events and the
// summary share, so a stored run's history can be read back and replayed.

#include <string>
#include <utility>
#include <vector>

#include "stagewise/engine/run.h"

namespace stagewise::engine {

/// "[2,4]": the canonical text of a cut list (no spaces, so an event's value is one word).
std::string cutsText(const std::vector<int>& cuts);
/// A cut list from JSON text ("[2, 4]"); throws std::invalid_argument saying what is wrong.
std::vector<int> cutsFromText(const std::string& text);

/// A stage setting's key split: "stages.2.lr_scale" gives stage 2 and "lr_scale"; false when
/// the key is no stage setting.
bool splitStageKey(const std::string& key, int& stage, std::string& setting);
/// The canonical text of a stage setting's value ("25", "0.5"); throws std::invalid_argument
/// when the setting is unknown or the value out of range.
std::string stageValueText(const std::string& setting, double value);

/// A stage as people read it, numbered from 1 as on screen: "S2" for index 1. (Keys such as
/// `stages.1.delay_ms` keep the index.)
std::string stageLabel(int index);
/// Which layers each stage holds, numbered from 1 as on screen: "S1: layers 1-2, S2: layers 3-5"
/// for {(0, 1), (2, 4)} (first and last layer index per stage).
std::string stageLayoutText(const std::vector<std::pair<int, int>>& firstLast);
/// The event of one stage held or let go: "S2 paused at step 412" ("resumed").
std::string stagePauseMessage(int index, bool paused, int64_t step);

/// The event message of an applied setting change: "change at step S: KEY=VALUE".
std::string changeEventMessage(int64_t step, const std::string& key, const std::string& value);

}  // namespace stagewise::engine
