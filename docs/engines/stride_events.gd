@tool
extends EditorScenePostImport
## Stride's events as method tracks in Godot 4 (an example to adapt).
##
## Set this script as the Import Script of a GLB exported by Stride (select the .glb, Import dock >
## Import Script, Reimport), with FILE.events.json beside it. Each animation named after an action
## in the events file gets a method track calling `_on_stride_event(name)` on the scene's root at
## every event (FootDown_L, FootDown_R, your own markers). The GLB's animations also hold the events
## in their extras, for a GLTFDocumentExtension to read instead.

const METHOD := "_on_stride_event"


func _post_import(scene: Node) -> Object:
	var sidecar := get_source_file().get_basename() + ".events.json"
	if not FileAccess.file_exists(sidecar):
		push_warning("Stride: no %s beside the model" % sidecar)
		return scene
	var data = JSON.parse_string(FileAccess.get_file_as_string(sidecar))
	if typeof(data) != TYPE_DICTIONARY or int(data.get("version", 0)) != 1:
		push_warning("Stride: %s is not a Stride events file (version 1)" % sidecar)
		return scene
	var player := _find_player(scene)
	if player == null:
		push_warning("Stride: no AnimationPlayer in %s" % get_source_file())
		return scene
	var target := player.get_node(player.root_node).get_path_to(scene)
	for action in data["actions"]:
		var name: String = action["name"]
		if not player.has_animation(name):
			push_warning("Stride: no animation %s" % name)
			continue
		var animation := player.get_animation(name)
		var track := animation.add_track(Animation.TYPE_METHOD)
		animation.track_set_path(track, target)
		for event in action["events"]:
			animation.track_insert_key(track, float(event["time"]), {"method": METHOD, "args": [event["name"]]})
	return scene


func _find_player(node: Node) -> AnimationPlayer:
	if node is AnimationPlayer:
		return node
	for child in node.get_children():
		var found := _find_player(child)
		if found != null:
			return found
	return null
